/**
 * Personal-data patterns in free text: e-mail addresses and phone numbers. Patterns, not proof: they flag what a person
 * should look at before the data leaves the building.
 */

export const EMAIL = 1;
export const PHONE = 2;

const EMAIL_PATTERN = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/;
/** Digit runs with separators, an optional leading + and brackets; checked further below. */
const PHONE_CANDIDATE = /(?<![\w+.\/-])(\+?\(?\d[\d ().-]{6,}\d)(?![\w\/-])/g;
const DATE_LIKE = /\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[./-]\d{1,2}[./-]\d{2,4}/;

/** A phone number: 9 to 15 digits in at most six groups, written with a leading + or with separators (a bare number is not one). */
function isPhone(candidate: string): boolean {
  const digits = candidate.replace(/\D/g, '').length;
  if (digits < 9 || digits > 15) return false;
  if (DATE_LIKE.test(candidate)) return false;
  // Numbers are written in a few groups, rarely of one digit (+33 6 12 34 56 78; a list of scores is not a number).
  const groups = candidate.split(/\D+/).filter(Boolean);
  if (groups.length > 6 || groups.filter((g) => g.length === 1).length > 1) return false;
  const separated = /[ ().-]/.test(candidate);
  if (!separated && !candidate.startsWith('+')) return false;
  // A decimal number (1234567.89) is not a phone number.
  if (/^\d+\.\d+$/.test(candidate)) return false;
  return true;
}

/** The kinds found in `text`: a bit mask of EMAIL and PHONE. */
export function personalData(text: string): number {
  let found = 0;
  if (text.includes('@') && EMAIL_PATTERN.test(text)) found |= EMAIL;
  PHONE_CANDIDATE.lastIndex = 0;
  for (let m = PHONE_CANDIDATE.exec(text); m; m = PHONE_CANDIDATE.exec(text)) {
    if (isPhone(m[1].trim())) {
      found |= PHONE;
      break;
    }
  }
  return found;
}

export function describePersonalData(mask: number): string {
  const kinds = [mask & EMAIL ? 'an e-mail address' : '', mask & PHONE ? 'a phone number' : ''].filter(Boolean);
  return kinds.join(' and ');
}
