/** A JOSE header or claims set as one segment of a compact JWS (RFC 7515 §7.1): base64url of its JSON. */
export const encodeSegment = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The JSON object a compact JWS segment holds, or undefined when it holds anything else or nothing readable. */
export function decodeSegment(segment: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
