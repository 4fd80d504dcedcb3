// The adapter protocol's JSON Schema (harness/schema/adapter-protocol.schema.json, the one home
// of the lines' shapes: the runner validates every line against it) and a small validator for
// the keywords it uses: type, const, enum, minimum, maximum, minLength, properties, required,
// additionalProperties, dependentRequired, items, allOf, anyOf, oneOf, if/then/else, $ref. Any
// other keyword is refused when the schema loads, so the kit never passes what the schema
// forbids. An integer is a JSON integer (Number.isInteger), a number is finite.
//
// Messages say where and what, as the runner does: `at attempt: expected an integer, got the
// string "1"`, `missing required field "commitment"`, `unknown field "zz"`.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

// The schema, looked up where it is: FAULTLINE_PROTOCOL_SCHEMA; the kit's own folder (a kit copied
// alone into another project, with `faultline schema protocol > kit/adapter-protocol.schema.json`);
// beside the kit in the source tree (harness/schema/) and once installed (share/faultline/schema/);
// else the faultline binary that runs the adapter prints it (FAULTLINE_BIN, else `faultline` on
// PATH). Never a copy kept here: the runner's schema is the one home.
function loadSchema() {
  const tried = [];
  const files = [
    process.env.FAULTLINE_PROTOCOL_SCHEMA,
    new URL('../../adapter-protocol.schema.json', import.meta.url),
    new URL('../../../../schema/adapter-protocol.schema.json', import.meta.url),
  ].filter(Boolean);
  for (const file of files) {
    try {
      return JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      if (error.code !== 'ENOENT') throw new Error(`the adapter protocol schema ${file}: ${error.message}`);
      tried.push(String(file instanceof URL ? file.pathname : file));
    }
  }
  const binary = process.env.FAULTLINE_BIN || 'faultline';
  try {
    return JSON.parse(execFileSync(binary, ['schema', 'protocol'],
                                   { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
  } catch (error) {
    tried.push(`${binary} schema protocol (${error.code ?? error.message})`);
  }
  throw new Error(`the adapter protocol schema was not found; tried: ${tried.join(', ')}. ` +
                  'Put it beside the kit: faultline schema protocol > kit/adapter-protocol.schema.json');
}

export const SCHEMA = loadSchema();

const ANNOTATIONS = new Set(['$schema', '$id', '$comment', 'title', 'description', 'default',
                             'examples', '$defs']);
const KEYWORDS = new Set(['type', 'const', 'enum', 'minimum', 'maximum', 'minLength', 'properties',
                          'required', 'additionalProperties', 'dependentRequired', 'items', 'allOf',
                          'anyOf', 'oneOf', 'if', 'then', 'else', '$ref']);
const MAX_DEPTH = 128;

// Every keyword of `schema` is one the validator checks (throws otherwise).
function checkKeywords(schema, where = '') {
  if (typeof schema === 'boolean') return;
  for (const [key, value] of Object.entries(schema)) {
    if (!ANNOTATIONS.has(key) && !KEYWORDS.has(key)) {
      throw new Error(`${where || '/'}: keyword "${key}" is not supported`);
    }
    if (['properties', '$defs'].includes(key)) {
      for (const [name, child] of Object.entries(value)) checkKeywords(child, `${where}/${key}/${name}`);
    } else if (['allOf', 'anyOf', 'oneOf'].includes(key)) {
      value.forEach((child, i) => checkKeywords(child, `${where}/${key}/${i}`));
    } else if (['items', 'if', 'then', 'else'].includes(key) ||
               (key === 'additionalProperties' && typeof value === 'object')) {
      checkKeywords(value, `${where}/${key}`);
    }
  }
}
checkKeywords(SCHEMA);

// The subschema a "#/..." JSON pointer names.
function resolve(ref) {
  return ref.slice(2).split('/').filter(Boolean)
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce((node, token) => node?.[token], SCHEMA);
}

const TYPES = {
  null: (v) => v === null,
  boolean: (v) => typeof v === 'boolean',
  integer: (v) => Number.isInteger(v),
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  string: (v) => typeof v === 'string',
  array: (v) => Array.isArray(v),
  object: (v) => v !== null && typeof v === 'object' && !Array.isArray(v),
};
const ARTICLE = { null: 'null', boolean: 'a boolean', integer: 'an integer', number: 'a number',
                  string: 'a string', array: 'an array', object: 'an object' };

const quoted = (text) => JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}...` : text);
const shown = (v) => (typeof v === 'string' ? quoted(v) : JSON.stringify(v));
function describe(v) {
  if (v === null || typeof v === 'boolean') return String(v);
  if (typeof v === 'string') return `the string ${quoted(v)}`;
  if (typeof v === 'number') return `the number ${v}`;
  return Array.isArray(v) ? 'an array' : 'an object';
}
const equal = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const joinPath = (path, key) => (/^[A-Za-z0-9_-]{1,60}$/.test(key)
  ? (path ? `${path}.${key}` : key) : `${path}[${quoted(key)}]`);

class Checker {
  constructor(max) {
    this.max = max;
    this.problems = [];
  }

  full() {
    return this.problems.length >= this.max;
  }

  report(path, message) {
    if (!this.full()) this.problems.push(path ? `at ${path}: ${message}` : message);
  }

  passes(schema, value, depth) {
    const quiet = new Checker(1);
    quiet.check(schema, value, '', depth + 1);
    return quiet.problems.length === 0;
  }

  check(schema, value, path, depth) {
    if (this.full()) return;
    if (depth > MAX_DEPTH) return this.report(path, `nests deeper than ${MAX_DEPTH} levels`);
    if (schema === true) return;
    if (schema === false) return this.report(path, 'no value is allowed here');
    if (!this.checkValue(schema, value, path)) return;
    if (schema.$ref) this.check(resolve(schema.$ref), value, path, depth + 1);
    if (TYPES.object(value)) this.checkObject(schema, value, path, depth);
    if (Array.isArray(value) && schema.items !== undefined) {
      value.forEach((item, i) => this.check(schema.items, item, `${path}[${i}]`, depth + 1));
    }
    this.checkCombinations(schema, value, path, depth);
  }

  checkValue(schema, value, path) {
    if (schema.type !== undefined) {
      const types = [schema.type].flat();
      if (!types.some((t) => TYPES[t](value))) {
        const names = [...types.filter((t) => t !== 'null'), ...types.filter((t) => t === 'null')];
        this.report(path, `expected ${names.map((t) => ARTICLE[t]).join(' or ')}, got ` +
                          `${describe(value)}`);
        return false;
      }
    }
    if ('const' in schema && !equal(value, schema.const)) {
      this.report(path, `expected ${shown(schema.const)}, got ${describe(value)}`);
    }
    if (schema.enum && !schema.enum.some((choice) => equal(choice, value))) {
      const what = value !== null && typeof value === 'object' ? describe(value) : shown(value);
      this.report(path, `${what} is not one of ${schema.enum.map(shown).join(', ')}`);
    }
    if (typeof value === 'number' && schema.minimum !== undefined && value < schema.minimum) {
      this.report(path, `expected at least ${schema.minimum}, got ${value}`);
    }
    if (typeof value === 'number' && schema.maximum !== undefined && value > schema.maximum) {
      this.report(path, `expected at most ${schema.maximum}, got ${value}`);
    }
    if (typeof value === 'string' && schema.minLength !== undefined &&
        [...value].length < schema.minLength) {
      this.report(path, schema.minLength === 1 ? 'expected a non-empty string'
        : `expected at least ${schema.minLength} characters`);
    }
    return true;
  }

  checkObject(schema, value, path, depth) {
    const missing = (schema.required ?? []).filter((field) => !Object.hasOwn(value, field));
    if (missing.length > 0) {
      this.report(path, `missing required field${missing.length > 1 ? 's' : ''} ` +
                        `${missing.map(quoted).join(', ')}`);
    }
    for (const [key, item] of Object.entries(value)) {
      const child = schema.properties && Object.hasOwn(schema.properties, key)
        ? schema.properties[key] : schema.additionalProperties;
      if (child === false) this.report(path, `unknown field ${quoted(key)}`);
      else if (child !== undefined) this.check(child, item, joinPath(path, key), depth + 1);
    }
    for (const [field, needs] of Object.entries(schema.dependentRequired ?? {})) {
      if (!Object.hasOwn(value, field)) continue;
      for (const need of needs.filter((n) => !Object.hasOwn(value, n))) {
        this.report(path, `field ${quoted(field)} goes with ${quoted(need)}, which is missing`);
      }
    }
  }

  checkCombinations(schema, value, path, depth) {
    for (const each of schema.allOf ?? []) this.check(each, value, path, depth + 1);
    if (schema.anyOf && !schema.anyOf.some((each) => this.passes(each, value, depth))) {
      this.report(path, `matches none of: ${this.firsts(schema.anyOf, value, depth)}`);
    }
    if (schema.oneOf) this.checkOneOf(schema.oneOf, value, path, depth);
    if (schema.if !== undefined) {
      const branch = this.passes(schema.if, value, depth) ? schema.then : schema.else;
      if (branch !== undefined) this.check(branch, value, path, depth + 1);
    }
  }

  checkOneOf(alternatives, value, path, depth) {
    const passing = alternatives.filter((each) => this.passes(each, value, depth)).length;
    if (passing === 1) return;
    // Alternatives that only require one field each say "exactly one of these fields".
    const onlyRequired = alternatives.every((each) => Object.keys(each).join() === 'required' &&
                                                      each.required.length === 1);
    if (onlyRequired) {
      const fields = alternatives.map((each) => quoted(each.required[0]));
      this.report(path, passing === 0 ? `needs one of the fields ${fields.join(' or ')}`
        : `allows only one of the fields ${fields.join(' and ')}`);
    } else {
      this.report(path, passing === 0 ? `matches none of: ${this.firsts(alternatives, value, depth)}`
        : 'matches more than one alternative; exactly one is allowed');
    }
  }

  firsts(alternatives, value, depth) {
    return alternatives.map((each) => {
      const quiet = new Checker(1);
      quiet.check(each, value, '', depth + 1);
      return quiet.problems[0];
    }).filter(Boolean).join(' | ');
  }
}

// The problems of `value` against the subschema at `pointer` ("#/$defs/adapter~1hello"; "#" the
// whole schema): at most `max`, an empty list when it is valid.
export function schemaProblems(value, pointer = '#', max = 3) {
  const schema = resolve(pointer);
  if (schema === undefined) return [`the schema has nothing at ${pointer}`];
  const checker = new Checker(max);
  checker.check(schema, value, '', 0);
  return checker.problems;
}

// The definition of an event or line in the schema: "#/$defs/adapter~1hello".
export const definitionOf = (type) => `#/$defs/${type.replaceAll('~', '~0').replaceAll('/', '~1')}`;

// The events an adapter writes (the schema's list).
export const EVENT_TYPES = SCHEMA.properties.type.enum;
