// Definition editing as YAML or JSON: parsing in the page (YAML through the bundled `yaml` module, loaded only
// here) and showing a 422 `validation_failed` message next to the field it names.
import { h, replace } from './ui.js';

/** Served from the `yaml` package's browser build (src/console/console.assets.ts); its types are the package's. */
const YAML_MODULE = './vendor/yaml/index.js';
/** @type {Promise<typeof import('yaml')> | undefined} */
let yamlModule;
function yaml() {
  yamlModule ??= import(YAML_MODULE);
  return yamlModule;
}

/**
 * Text for a value in the chosen format.
 * @param {unknown} value @param {'yaml' | 'json'} format
 */
export async function stringify(value, format) {
  if (format === 'json') return `${JSON.stringify(value, null, 2)}\n`;
  return (await yaml()).stringify(value);
}

/**
 * The value of a text in the chosen format; throws an Error whose message says where the text is wrong.
 * @param {string} text @param {'yaml' | 'json'} format
 */
export async function parse(text, format) {
  if (format === 'json') {
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new Error(`This is not valid JSON: ${/** @type {Error} */ (error).message}`);
    }
  }
  const doc = (await yaml()).parseDocument(text);
  if (doc.errors.length > 0) throw new Error(`This is not valid YAML: ${doc.errors[0]?.message ?? 'parse error'}`);
  return doc.toJS();
}

/**
 * The field a `validation_failed` message names: its leading path (`command.definition.base_url: …`) without the
 * command envelope, or null when the message names none.
 * @param {string} message
 * @returns {string | null}
 */
export function fieldOf(message) {
  // `definition: unknown field "x"` names the field in its text rather than its path.
  const unknown = /unknown field "([^"]+)"/.exec(message);
  if (unknown?.[1]) return unknown[1];
  const match = /^([A-Za-z0-9_.[\]"'/-]+):\s/.exec(message);
  if (!match?.[1]) return null;
  const path = match[1].replace(/^command\./, '').replace(/^(definition|model_definition)\.?/, '');
  return path || null;
}

/**
 * The 1-based line of `text` where the last key of `field` is written, or null.
 * @param {string} text @param {string} field
 */
export function lineOf(text, field) {
  const key = field
    .split('.')
    .pop()
    ?.replace(/\[\d+\]$/, '');
  if (!key) return null;
  const lines = text.split('\n');
  const pattern = new RegExp(`^\\s*(?:-\\s*)?["']?${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}["']?\\s*:`);
  const index = lines.findIndex((line) => pattern.test(line));
  return index === -1 ? null : index + 1;
}

let editors = 0;

/**
 * A labelled editor: a format switch (YAML or JSON), a text area and the place where errors about it appear.
 * @param {{ label: string, value: unknown, hint?: string }} options
 */
export async function definitionEditor(options) {
  const id = `editor-${++editors}`;
  /** @type {'yaml' | 'json'} */
  let format = 'yaml';
  const area = /** @type {HTMLTextAreaElement} */ (
    h('textarea', { id, name: id, spellcheck: 'false', autocomplete: 'off', 'aria-describedby': `${id}-error ${id}-hint`, rows: 12 })
  );
  area.value = await stringify(options.value, format);
  const error = h('div', { id: `${id}-error`, 'aria-live': 'polite' });
  const formatSelect = /** @type {HTMLSelectElement} */ (
    h(
      'select',
      { id: `${id}-format`, name: `${id}-format` },
      h('option', { value: 'yaml' }, 'YAML'),
      h('option', { value: 'json' }, 'JSON'),
    )
  );
  formatSelect.addEventListener('change', () => {
    const next = /** @type {'yaml' | 'json'} */ (formatSelect.value);
    parse(area.value, format).then(
      async (value) => {
        area.value = await stringify(value, next);
        format = next;
        clear();
      },
      (e) => {
        formatSelect.value = format;
        show(/** @type {Error} */ (e).message, null);
      },
    );
  });
  function clear() {
    replace(error);
    area.removeAttribute('aria-invalid');
  }
  /** @param {string} message @param {string | null} field */
  function show(message, field) {
    const line = field ? lineOf(area.value, field) : null;
    const where = field ? `Field ${field}${line ? ` (line ${line})` : ''}: ` : '';
    replace(error, h('p', { className: 'field-error', role: 'alert', 'data-field': field ?? '' }, where, message));
    area.setAttribute('aria-invalid', 'true');
  }
  const element = h(
    'div',
    { className: 'editor' },
    h(
      'div',
      { className: 'row' },
      h('label', { for: id }, options.label),
      h('label', { for: `${id}-format`, className: 'visually-hidden' }, `${options.label} format`),
      formatSelect,
    ),
    area,
    error,
    h('p', { className: 'hint', id: `${id}-hint` }, options.hint ?? ''),
  );
  return {
    element,
    area,
    /** The edited value; shows the parse error and throws when the text does not parse. */
    async value() {
      clear();
      try {
        return await parse(area.value, format);
      } catch (e) {
        show(/** @type {Error} */ (e).message, null);
        throw e;
      }
    },
    /** Shows a platform error: a 422 next to the field it names, anything else as it is. @param {{ code?: string, message?: string }} e */
    showError(e) {
      const message = e.message ?? String(e);
      show(message, e.code === 'validation_failed' ? fieldOf(message) : null);
    },
    clear,
  };
}
