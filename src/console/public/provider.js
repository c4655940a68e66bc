// One provider: lane on/off, API key set/clear, the definition and model definitions as YAML or JSON, removal
// entries, discovery and the model test explained in words (issue 19 item 4).
import { api, providerPath } from './api.js';
import { definitionEditor } from './editor.js';
import { AVAILABILITY_UPDATES, errorBox, h, OUTCOMES, pageTitle, replace, words } from './ui.js';

/**
 * @typedef {{ id: string, display_name: string | null, credentials: string | null, enabled: boolean,
 *   lock_version: number | null, configured: boolean, material_kind: string | null, reauthorization_required: boolean,
 *   unavailable_until: string | null, models: number }} ProviderRow
 * @typedef {{ model: string, definition: Record<string, unknown>, source: string, removed: boolean }} ModelEntry
 * @typedef {{ definition: Record<string, unknown> | null, source: string, models: ModelEntry[],
 *   model_definitions: Record<string, unknown> }} Configuration
 */

const SOURCES = {
  catalog: 'from the deployment’s catalog files',
  override: 'overridden here (the catalog file is the fallback)',
  custom: 'a custom provider created here',
  removed: 'removed (a custom provider whose declaration was deleted)',
};

/**
 * @param {HTMLElement} view
 * @param {string} providerId
 */
export async function render(view, providerId) {
  const status = h('div', { className: 'status', 'aria-live': 'polite', id: 'provider-status' });
  const body = h(
    'div',
    { id: 'provider-body', className: 'region', 'aria-busy': 'true' },
    h('p', { className: 'loading' }, 'Loading the provider…'),
  );
  replace(view, h('p', null, h('a', { href: '#/providers' }, '← All providers')), pageTitle(providerId), status, body);

  /** @type {ProviderRow} */
  let provider;
  /** @type {Configuration} */
  let configuration;

  async function load() {
    const answer = await api('GET', providerPath(providerId));
    provider = answer.model_provider;
    configuration = answer.configuration;
  }

  /** @param {string} text */
  const ok = (text) => replace(status, h('p', { className: 'ok' }, text));
  /** @param {unknown} error */
  const failed = (error) => replace(status, errorBox(error, { reload: () => void refresh('Reloaded: the page shows the current state.') }));

  /** @param {string} [message] */
  async function refresh(message) {
    try {
      await load();
      await draw();
      if (message) ok(message);
    } catch (error) {
      failed(error);
    }
  }

  /**
   * Runs one command with the version the page read; afterwards the page reads the provider again. A failure is
   * shown (a 409 with a reload button) and nothing is retried.
   * @param {string} method @param {string} suffix @param {Record<string, unknown> | undefined} command
   * @param {string} done @param {{ onError?: (error: unknown) => boolean }} [options]
   */
  async function command(method, suffix, command, done, options = {}) {
    replace(status, h('p', { className: 'loading' }, 'Saving…'));
    try {
      const answer = await api(method, providerPath(providerId, suffix), command === undefined ? {} : { body: { command } });
      await refresh(done);
      return answer;
    } catch (error) {
      if (options.onError?.(error)) replace(status);
      else failed(error);
      return undefined;
    }
  }

  const version = () => provider.lock_version;
  // Results outlive the redraw that follows a command, so discovery's and a test's answers stay on screen.
  const discoveryResult = h('div', { 'aria-live': 'polite', id: 'discovery-result' });
  /** @type {Map<string, HTMLElement>} */
  const testResults = new Map();

  async function draw() {
    const p = provider;
    const c = configuration;
    const sections = [];
    sections.push(
      h(
        'section',
        { className: 'panel', 'aria-labelledby': 'h-lane' },
        h('h2', { id: 'h-lane' }, 'Lane'),
        h(
          'dl',
          { className: 'facts' },
          h('dt', null, 'Name'),
          h('dd', null, p.display_name ?? p.id),
          h('dt', null, 'Lane'),
          h('dd', { id: 'lane-state' }, p.enabled ? 'On: Agents can use its models' : 'Off: no Agent can use its models'),
          h('dt', null, 'Definition'),
          h('dd', null, /** @type {Record<string, string>} */ (SOURCES)[c.source] ?? c.source),
          h('dt', null, 'Version'),
          h('dd', null, p.lock_version === null ? 'untouched (no policy yet)' : String(p.lock_version)),
          p.unavailable_until ? [h('dt', null, 'Paused until'), h('dd', null, new Date(p.unavailable_until).toLocaleString())] : null,
        ),
        h(
          'p',
          null,
          h(
            'button',
            {
              type: 'button',
              id: 'lane-toggle',
              onclick: () =>
                void command(
                  'PUT',
                  '/lane',
                  { enabled: !p.enabled, expected_lock_version: version() },
                  p.enabled ? 'The lane is off.' : 'The lane is on.',
                ),
            },
            p.enabled ? 'Turn the lane off' : 'Turn the lane on',
          ),
        ),
      ),
    );
    if (p.credentials === 'api_key') sections.push(apiKeySection(p));
    sections.push(await definitionSection(c));
    sections.push(await modelsSection(c));
    sections.push(discoverySection(c));
    replace(body, ...sections);
    body.removeAttribute('aria-busy');
  }

  /** @param {ProviderRow} p */
  function apiKeySection(p) {
    const input = /** @type {HTMLInputElement} */ (
      h('input', {
        id: 'api-key',
        name: 'api-key',
        type: 'password',
        autocomplete: 'off',
        spellcheck: 'false',
        'aria-describedby': 'api-key-hint',
      })
    );
    const form = h(
      'form',
      {
        className: 'row',
        onsubmit: (/** @type {Event} */ event) => {
          event.preventDefault();
          const key = input.value;
          // The key leaves the field at once: it is never shown again, not even while the request runs.
          input.value = '';
          if (!key.trim()) {
            replace(status, h('div', { className: 'error', role: 'alert' }, 'Enter an API key to save.'));
            return;
          }
          void command('PUT', '/api_key', { api_key: key }, 'The API key is saved and the lane is on. It will not be shown again.');
        },
      },
      h('div', { className: 'field grow' }, h('label', { for: 'api-key' }, p.configured ? 'Replace the API key' : 'API key'), input),
      h('button', { type: 'submit' }, 'Save key'),
    );
    return h(
      'section',
      { className: 'panel', 'aria-labelledby': 'h-key' },
      h('h2', { id: 'h-key' }, 'API key'),
      h('p', { id: 'key-state' }, p.configured ? 'A key is installed.' : 'No key is installed.'),
      form,
      h('p', { className: 'hint', id: 'api-key-hint' }, 'The key is stored sealed. Nobody can read it back: not this page, not the API.'),
      p.configured
        ? h(
            'p',
            null,
            h(
              'button',
              {
                type: 'button',
                className: 'danger',
                id: 'clear-key',
                onclick: () => void command('DELETE', '/api_key', undefined, 'The API key is cleared.'),
              },
              'Clear the key',
            ),
          )
        : null,
    );
  }

  /** @param {Configuration} c */
  async function definitionSection(c) {
    const editor = await definitionEditor({
      label: 'Provider declaration',
      value: c.definition ?? { display_name: providerId, base_url: 'https://', api_format: 'openai_chat', credentials: 'api_key' },
      hint: 'Fields: display_name, base_url, api_format, credentials. Saving neither turns the lane on nor calls the provider.',
    });
    const save = async () => {
      let definition;
      try {
        definition = await editor.value();
      } catch {
        return;
      }
      await command('PUT', '/definition', { definition, expected_lock_version: version() }, 'The definition is saved.', {
        onError: (error) => {
          if (/** @type {{ code?: string }} */ (error).code === 'stale_object') return false;
          editor.showError(/** @type {{ code?: string, message?: string }} */ (error));
          return true;
        },
      });
    };
    return h(
      'section',
      { className: 'panel', 'aria-labelledby': 'h-definition' },
      h('h2', { id: 'h-definition' }, 'Definition'),
      editor.element,
      h(
        'div',
        { className: 'row' },
        h('button', { type: 'button', id: 'save-definition', onclick: () => void save() }, 'Save the definition'),
        c.source === 'override' || c.source === 'custom'
          ? h(
              'button',
              {
                type: 'button',
                className: 'danger',
                onclick: () =>
                  void command(
                    'DELETE',
                    '/definition',
                    { expected_lock_version: version() },
                    c.source === 'override' ? 'The catalog definition applies again.' : 'The provider is removed.',
                  ),
              },
              c.source === 'override' ? 'Go back to the catalog definition' : 'Remove this provider',
            )
          : null,
      ),
    );
  }

  /** @param {Configuration} c */
  async function modelsSection(c) {
    const inherits = Object.keys(c.model_definitions);
    const list = h('div');
    for (const entry of c.models) list.append(await modelEntry(entry));
    const newRef = /** @type {HTMLInputElement} */ (
      h('input', { id: 'new-model', name: 'new-model', type: 'text', autocomplete: 'off', placeholder: `${providerId}/model-id` })
    );
    const adder = h(
      'details',
      null,
      h('summary', null, 'Add a model'),
      h('div', { className: 'field' }, h('label', { for: 'new-model' }, 'Model reference'), newRef),
    );
    const newEditor = await definitionEditor({ label: 'New model definition', value: inherits[0] ? { inherit: inherits[0] } : {} });
    adder.append(
      newEditor.element,
      h(
        'button',
        {
          type: 'button',
          onclick: async () => {
            let definition;
            try {
              definition = await newEditor.value();
            } catch {
              return;
            }
            await command(
              'PUT',
              '/model_definition',
              { model: newRef.value.trim(), definition, expected_lock_version: version() },
              `${newRef.value.trim()} is saved.`,
              {
                onError: (error) => {
                  if (/** @type {{ code?: string }} */ (error).code === 'stale_object') return false;
                  newEditor.showError(/** @type {{ code?: string, message?: string }} */ (error));
                  return true;
                },
              },
            );
          },
        },
        'Save the new model',
      ),
    );
    return h(
      'section',
      { className: 'panel', 'aria-labelledby': 'h-models' },
      h('h2', { id: 'h-models' }, `Models (${c.models.filter((m) => !m.removed).length})`),
      h(
        'p',
        { className: 'hint' },
        inherits.length ? `Shared definitions to inherit from: ${inherits.join(', ')}.` : 'No shared definitions are loaded.',
      ),
      list,
      adder,
    );
  }

  /** @param {ModelEntry} entry */
  async function modelEntry(entry) {
    const item = /** @type {HTMLDetailsElement} */ (h('details', { className: 'card model-entry', 'data-model': entry.model }));
    const testResult = testResults.get(entry.model) ?? h('div', { 'aria-live': 'polite', className: 'test-result' });
    testResults.set(entry.model, testResult);
    item.append(
      h(
        'summary',
        null,
        h('span', { className: 'ref' }, entry.model),
        ' ',
        h('span', { className: entry.removed ? 'pill off' : 'pill ok' }, entry.removed ? 'removed' : entry.source),
      ),
    );
    if (entry.removed) {
      item.append(
        h(
          'p',
          null,
          'This model was removed here. Restoring it brings back the catalog’s definition (a custom model without one disappears).',
        ),
        h(
          'button',
          {
            type: 'button',
            onclick: () =>
              void command(
                'POST',
                '/model_definition/reset',
                { model: entry.model, expected_lock_version: version() },
                `${entry.model} is restored.`,
              ),
          },
          'Restore',
        ),
      );
      return item;
    }
    // The editor and its buttons are built when the entry is first opened: a provider with hundreds of models
    // then costs one summary line each, not one YAML rendering each.
    let built = false;
    item.addEventListener('toggle', () => {
      if (!item.open || built) return;
      built = true;
      void buildEntry(item, entry, testResult);
    });
    return item;
  }

  /** @param {HTMLElement} item @param {ModelEntry} entry @param {HTMLElement} testResult */
  async function buildEntry(item, entry, testResult) {
    const editor = await definitionEditor({ label: `Definition of ${entry.model}`, value: entry.definition });
    const save = async () => {
      let definition;
      try {
        definition = await editor.value();
      } catch {
        return;
      }
      await command(
        'PUT',
        '/model_definition',
        { model: entry.model, definition, expected_lock_version: version() },
        `${entry.model} is saved.`,
        {
          onError: (error) => {
            if (/** @type {{ code?: string }} */ (error).code === 'stale_object') return false;
            editor.showError(/** @type {{ code?: string, message?: string }} */ (error));
            return true;
          },
        },
      );
    };
    item.append(
      editor.element,
      h(
        'div',
        { className: 'row' },
        h('button', { type: 'button', onclick: () => void save() }, 'Save'),
        h(
          'button',
          { type: 'button', className: 'secondary', 'data-action': 'test', onclick: () => void test(entry.model, testResult) },
          'Test the connection',
        ),
        entry.source !== 'catalog'
          ? h(
              'button',
              {
                type: 'button',
                className: 'secondary',
                onclick: () =>
                  void command(
                    'POST',
                    '/model_definition/reset',
                    { model: entry.model, expected_lock_version: version() },
                    `${entry.model} follows the catalog again.`,
                  ),
              },
              'Reset to the catalog',
            )
          : null,
        h(
          'button',
          {
            type: 'button',
            className: 'danger',
            onclick: () =>
              void command(
                'DELETE',
                '/model_definition',
                { model: entry.model, expected_lock_version: version() },
                `${entry.model} is removed; it can be restored.`,
              ),
          },
          'Remove',
        ),
      ),
      testResult,
    );
  }

  /**
   * The fixed diagnostic (spec rule 8): one request, allow about 45 s, never retried; the result in words.
   * @param {string} model @param {HTMLElement} where
   */
  async function test(model, where) {
    replace(where, h('p', { className: 'loading' }, 'Testing… the provider has up to 30 seconds to answer.'));
    try {
      const answer = await api('POST', providerPath(providerId, '/model_test'), {
        body: { command: { model, expected_lock_version: version() } },
      });
      const t = answer.model_test;
      replace(
        where,
        h(
          'div',
          { className: 'result', 'data-outcome': t.outcome },
          h('p', null, h('strong', null, t.outcome === 'succeeded' ? 'Succeeded. ' : 'Did not succeed. '), words(OUTCOMES, t.outcome)),
          h(
            'dl',
            { className: 'facts' },
            h('dt', null, 'Outcome'),
            h('dd', { 'data-field': 'outcome' }, t.outcome),
            h('dt', null, 'Provider HTTP status'),
            h('dd', { 'data-field': 'http_status' }, t.http_status === null ? 'none (no answer from the provider)' : String(t.http_status)),
            h('dt', null, 'Took'),
            h('dd', { 'data-field': 'duration_ms' }, `${t.duration_ms} ms`),
            h('dt', null, 'Availability'),
            h('dd', { 'data-field': 'availability_update' }, words(AVAILABILITY_UPDATES, t.availability_update)),
          ),
        ),
      );
      provider = answer.model_provider;
    } catch (error) {
      replace(where, errorBox(error, { reload: () => void refresh('Reloaded: the page shows the current state.') }));
    }
  }

  /** @param {Configuration} c */
  function discoverySection(c) {
    const result = discoveryResult;
    const run = async () => {
      replace(result, h('p', { className: 'loading' }, 'Asking the provider for its model directory…'));
      try {
        const answer = await api('POST', providerPath(providerId, '/model_discovery'), {
          body: { command: { expected_lock_version: version() } },
        });
        /** @type {{ id: string, display_name: string | null }[]} */
        const listed = answer.models;
        const ids = new Set(listed.map((m) => m.id));
        const configured = c.models.filter((m) => !m.removed);
        const missing = configured.filter((m) => !ids.has(upstreamId(m)));
        await refresh();
        replace(
          result,
          h(
            'div',
            { className: 'result' },
            h('p', null, `The provider lists ${listed.length} model${listed.length === 1 ? '' : 's'}.`),
            missing.length
              ? h(
                  'div',
                  null,
                  h(
                    'p',
                    null,
                    `${missing.length} configured model${missing.length === 1 ? ' is' : 's are'} no longer listed and now marked invalid (hidden from Agents):`,
                  ),
                  h('ul', { id: 'discovery-missing' }, ...missing.map((m) => h('li', { className: 'ref' }, m.model))),
                )
              : h('p', null, 'Every configured model is listed; any invalid mark on them was cleared.'),
            h(
              'details',
              null,
              h('summary', null, 'Models the provider lists'),
              h(
                'ul',
                { id: 'discovery-listed' },
                ...listed.map((m) => h('li', null, h('span', { className: 'ref' }, m.id), m.display_name ? ` — ${m.display_name}` : '')),
              ),
            ),
          ),
        );
      } catch (error) {
        replace(result, errorBox(error, { reload: () => void refresh('Reloaded: the page shows the current state.') }));
      }
    };
    return h(
      'section',
      { className: 'panel', 'aria-labelledby': 'h-discovery' },
      h('h2', { id: 'h-discovery' }, 'Discovery'),
      h(
        'p',
        { className: 'hint' },
        'Reads the provider’s model directory with the saved key. Configured models it no longer lists are marked invalid; listed ones are cleared. Nothing else changes.',
      ),
      h('button', { type: 'button', id: 'discover', onclick: () => void run() }, 'Discover models'),
      result,
    );
  }

  /** The effective upstream id: the authored `model_id`, else the reference after the provider's first `/`. @param {ModelEntry} m */
  function upstreamId(m) {
    const authored = m.definition.model_id;
    return typeof authored === 'string' ? authored : m.model.slice(providerId.length + 1);
  }

  try {
    await load();
    await draw();
  } catch (error) {
    replace(body, errorBox(error));
    body.removeAttribute('aria-busy');
  }
}
