import type { Kysely } from 'kysely';

/**
 * The image list's class filter asks "has this image an annotation of class C": one probe of (class_id, image_id)
 * per image, or a walk of that class's images. It replaces the index on class_id alone, which it starts with, so
 * annotation writes keep updating the same number of indexes.
 */
export function annotationClassImageIndex() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.createIndex('annotations_class_image').on('annotations').columns(['class_id', 'image_id']).execute();
      await db.schema.dropIndex('annotations_class').execute();
    },
  };
}
