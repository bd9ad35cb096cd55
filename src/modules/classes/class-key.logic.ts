/** Class names match across projects and models case-insensitively, ignoring surrounding spaces: the key they match by. */
export const classKey = (name: string) => name.trim().toLowerCase();
