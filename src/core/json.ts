/** A JSON value as the strict parser produces it: numbers are always finite doubles. */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export type JsonObject = { [member: string]: JsonValue };
