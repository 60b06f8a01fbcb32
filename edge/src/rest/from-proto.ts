/**
 * The REST contract's response schemas, built from the proto messages' fields (proto/write-fields.mjs
 * generates them from the descriptors at build time): every field the message declares, in its
 * order, typed from the proto (int32 and int64 as integers, a map as a record of strings, an enum as
 * its REST values), optional where the proto field is. What is written here is only what the spec
 * adds: null instead of omitted, bounds and closed value sets, descriptions, the REST name where it
 * differs, and the fields a presenter drops (with why) or adds.
 */
import { z } from 'zod';

/** What proto/write-fields.mjs writes of an enum. */
export interface EnumFacts {
  enum: string;
  values: Readonly<Record<string, number>>;
  default?: string;
}

/** What proto/write-fields.mjs writes of a field. */
export interface FieldFacts {
  type: 'string' | 'bool' | 'int32' | 'int64' | 'double' | 'bytes' | 'map' | 'enum' | 'message';
  enum?: EnumFacts;
  message?: string;
  repeated?: boolean;
  optional?: boolean;
  oneof?: string;
}

/** What proto/write-fields.mjs writes of a message. */
export interface MessageFacts {
  message: string;
  fields: Readonly<Record<string, FieldFacts>>;
}

/** What the spec says of one field beyond its proto declaration. */
export interface FieldEdit {
  /** The REST name, where it differs from the proto's JSON name (the route's presenter renames). */
  as?: string;
  /**
   * One value's schema: a message field's REST object (required), or a narrower one for a scalar
   * (a bound, a closed value set, a format). A repeated field's elements.
   */
  value?: z.ZodType;
  /** For a message field: its REST object's fields stand here, at the top level (presenter flattens). */
  spread?: z.ZodObject;
  /** An absent value is null in REST, not omitted. */
  nullable?: true;
  /** Always present in this REST object, though optional in the message (which serves others too). */
  required?: true;
  description?: string;
  example?: unknown;
}

type FieldNames<M extends MessageFacts> = keyof M['fields'] & string;

export interface RestSpec<M extends MessageFacts> {
  /** The component name in the OpenAPI document. */
  id?: string;
  description?: string;
  fields?: { [K in FieldNames<M>]?: FieldEdit };
  /** Proto fields the REST answer leaves out, each with where it goes instead (a header, a cookie). */
  omit?: { [K in FieldNames<M>]?: string };
  /** REST fields no proto field carries, after the others: the route's presenter supplies them. */
  add?: Record<string, z.ZodType>;
}

/** The schema a field gets, as TypeScript sees it (so presenters are type-checked against it). */
type Scalar<F extends FieldFacts> = F['type'] extends 'string'
  ? z.ZodString
  : F['type'] extends 'bool'
    ? z.ZodBoolean
    : F['type'] extends 'int32' | 'int64' | 'double'
      ? z.ZodNumber
      : F['type'] extends 'map'
        ? z.ZodRecord<z.ZodString, z.ZodString>
        : F extends { enum: infer E extends EnumFacts }
          ? z.ZodEnum<{ [K in ValueName<E>]: K }>
          : never;
type Value<F extends FieldFacts, E> = E extends { value: infer V extends z.ZodType } ? V : Scalar<F>;
type Cardinal<F extends FieldFacts, S extends z.ZodType> = F extends { repeated: true } ? z.ZodArray<S> : S;
type Presence<F extends FieldFacts, E, S extends z.ZodType> = E extends { nullable: true }
  ? z.ZodNullable<S>
  : F extends { optional: true }
    ? E extends { required: true }
      ? S
      : z.ZodOptional<S>
    : S;
type FieldSchema<F extends FieldFacts, E> = Presence<F, E, Cardinal<F, Value<F, E>>>;

type EditOf<S, K> = S extends { fields: infer F } ? (K extends keyof F ? F[K] : undefined) : undefined;
type Kept<M extends MessageFacts, S> = Exclude<FieldNames<M>, S extends { omit: infer O } ? keyof O : never>;
type RestName<K, E> = E extends { as: infer A extends string } ? A : K;
type OwnShape<M extends MessageFacts, S> = {
  [K in Kept<M, S> as EditOf<S, K> extends { spread: z.ZodObject } ? never : RestName<K, EditOf<S, K>>]: FieldSchema<
    M['fields'][K],
    EditOf<S, K>
  >;
};
type SpreadShape<M extends MessageFacts, S> = {
  [K in Kept<M, S>]: EditOf<S, K> extends { spread: z.ZodObject<infer Inner> } ? Inner : never;
}[Kept<M, S>];
type AddShape<S> = S extends { add: infer A extends Record<string, z.ZodType> } ? A : unknown;
type Flat<T> = { [K in keyof T]: T[K] } & {};
export type RestShape<M extends MessageFacts, S> = Flat<
  OwnShape<M, S> & ([SpreadShape<M, S>] extends [never] ? unknown : SpreadShape<M, S>) & AddShape<S>
>;

/** Where each proto field of a REST schema went, for the contract test. */
export interface Provenance {
  message: string;
  /**
   * Proto JSON name -> its REST name, the object spread in its place, why it is left out, or (for a
   * reshaped message) the REST object its presenter makes of it.
   */
  fields: Record<string, { rest: string } | { spread: z.ZodObject } | { omitted: string } | { reshaped: z.ZodObject }>;
  /** REST names no proto field carries. */
  added: string[];
}

const provenance = new WeakMap<z.ZodType, Provenance>();

/** Where a schema built here came from; undefined for a schema not built from a message. */
export const provenanceOf = (schema: z.ZodType): Provenance | undefined => provenance.get(schema);

function scalar(facts: FieldFacts, where: string): z.ZodType {
  switch (facts.type) {
    case 'string':
      return z.string();
    case 'bool':
      return z.boolean();
    case 'int32':
    case 'int64':
      return z.number().int();
    case 'double':
      return z.number();
    case 'map':
      return z.record(z.string(), z.string());
    case 'enum':
      return restEnum(facts.enum as EnumFacts);
    default:
      throw new Error(`${where} (${facts.type}) needs its REST schema as \`value\``);
  }
}

type ValueName<E extends EnumFacts> = keyof E['values'] & string;

/** An enum's REST values, in the proto's order. */
export const restEnum = <E extends EnumFacts>(facts: E, params?: Parameters<typeof z.enum>[1]) =>
  z.enum(Object.keys(facts.values) as [ValueName<E>, ...ValueName<E>[]], params);

/** The proto enum number of a REST value. */
export const enumNumber = <E extends EnumFacts>(facts: E, value: ValueName<E>): E['values'][ValueName<E>] =>
  facts.values[value] as E['values'][ValueName<E>];

function field(facts: FieldFacts, edit: FieldEdit, where: string): z.ZodType {
  let schema = edit.value ?? scalar(facts, where);
  if (facts.repeated) schema = z.array(schema);
  if (edit.nullable) schema = schema.nullable();
  else if (facts.optional && !edit.required) schema = schema.optional();
  if (edit.description !== undefined || edit.example !== undefined) {
    schema = schema.meta({
      ...(edit.description === undefined ? {} : { description: edit.description }),
      ...(edit.example === undefined ? {} : { example: edit.example }),
    });
  }
  return schema;
}

/** The REST object of a proto message: its fields as the spec has them. Strict: an unlisted field is drift. */
export function restObject<M extends MessageFacts, const S extends RestSpec<M> = Record<never, never>>(
  message: M,
  spec: S = {} as S,
): z.ZodObject<RestShape<M, S>, z.core.$strict> {
  const edits = (spec.fields ?? {}) as Record<string, FieldEdit>;
  const omit = (spec.omit ?? {}) as Record<string, string>;
  for (const name of [...Object.keys(edits), ...Object.keys(omit)]) {
    if (!(name in message.fields)) throw new Error(`${message.message} has no field ${name}`);
  }
  const shape: Record<string, z.ZodType> = {};
  const fields: Provenance['fields'] = {};
  const put = (name: string, schema: z.ZodType) => {
    if (name in shape) throw new Error(`${message.message}: the REST field ${name} is written twice`);
    shape[name] = schema;
  };
  for (const [name, facts] of Object.entries(message.fields)) {
    const reason = omit[name];
    if (reason !== undefined) {
      fields[name] = { omitted: reason };
      continue;
    }
    const edit = edits[name] ?? {};
    if (edit.spread) {
      for (const [inner, schema] of Object.entries(edit.spread.shape as Record<string, z.ZodType>)) put(inner, schema);
      fields[name] = { spread: edit.spread };
      continue;
    }
    const restName = edit.as ?? name;
    put(restName, field(facts, edit, `${message.message}.${name}`));
    fields[name] = { rest: restName };
  }
  for (const [name, schema] of Object.entries(spec.add ?? {})) put(name, schema);
  let schema = z.strictObject(shape);
  if (spec.id !== undefined || spec.description !== undefined) {
    schema = schema.meta({
      ...(spec.id === undefined ? {} : { id: spec.id }),
      ...(spec.description === undefined ? {} : { description: spec.description }),
    });
  }
  provenance.set(schema, { message: message.message, fields, added: Object.keys(spec.add ?? {}) });
  return schema as unknown as z.ZodObject<RestShape<M, S>, z.core.$strict>;
}

/**
 * A REST schema a presenter builds from a message in a shape of its own (a oneof as a tagged
 * union): `fields` names the REST object each proto field becomes, for the contract test.
 */
export function reshaped<M extends MessageFacts, S extends z.ZodType>(
  message: M,
  schema: S,
  fields: { [K in FieldNames<M>]: z.ZodObject },
): S {
  provenance.set(schema, {
    message: message.message,
    fields: Object.fromEntries(Object.entries(fields).map(([name, rest]) => [name, { reshaped: rest as z.ZodObject }])),
    added: [],
  });
  return schema;
}
