// Models page: the account-effective catalog with filters, each refusal in words, hide/unhide and
// invalidate/restore with the lock_version the page read (issue 19 item 3).
import { ADMIN, api, providerPath } from './api.js';
import { errorBox, h, pageTitle, reasonInWords, replace } from './ui.js';

/**
 * @typedef {{ ref: string, provider_id: string, model_id: string, display_name: string | null, workload: string,
 *   available: boolean, visible: boolean, unavailable_reason: string | null }} ModelRow
 * @typedef {{ id: string, display_name: string | null, lock_version: number | null, enabled: boolean }} ProviderRow
 */

/** @param {string} label @param {string} id @param {[string, string][]} options */
function select(label, id, options) {
  const el = h('select', { id, name: id }, ...options.map(([value, text]) => h('option', { value }, text)));
  return { el: /** @type {HTMLSelectElement} */ (el), field: h('div', { className: 'field' }, h('label', { for: id }, label), el) };
}

/**
 * Why a model is not visible: hidden by an administrator, marked invalid, or (when the reason the API gives is an
 * earlier refusal, such as a disabled lane) possibly either. `unavailable_reason` names only the first refusal, so a
 * model that is not visible for an unnamed reason counts as both, and its row offers both ways back.
 * @param {ModelRow} m
 */
function marks(m) {
  return {
    hidden: m.unavailable_reason === 'model_hidden' || (!m.visible && m.unavailable_reason !== 'model_unavailable'),
    invalid: m.unavailable_reason === 'model_unavailable' || (!m.visible && m.unavailable_reason !== 'model_hidden'),
  };
}

/** The Visible filter: yes, no, or no for one of the two reasons (hidden and invalid are different acts). */
const VISIBILITY = /** @type {[string, string][]} */ ([
  ['', 'Any'],
  ['true', 'Yes'],
  ['false', 'No'],
  ['hidden', 'No: hidden'],
  ['invalid', 'No: marked invalid'],
]);

/** @param {ModelRow} m @param {string} choice */
function visibilityMatches(m, choice) {
  if (choice === 'hidden') return !m.visible && marks(m).hidden;
  if (choice === 'invalid') return !m.visible && marks(m).invalid;
  return !choice || String(m.visible) === choice;
}

const YES_NO = /** @type {[string, string][]} */ ([
  ['', 'Any'],
  ['true', 'Yes'],
  ['false', 'No'],
]);

/**
 * @param {HTMLElement} view
 */
export async function render(view) {
  // The page's frame (filters, status line, count, table area) is drawn before the data arrives and keeps its
  // place and size once it does: loading, filtering and acting on a row never move what the reader is looking at.
  const status = h('div', { className: 'status', 'aria-live': 'polite' });
  const table = h('div', { className: 'table-wrap', 'aria-busy': 'true' }, h('p', { className: 'loading' }, 'Loading models…'));
  const provider = select('Provider', 'f-provider', [['', 'All providers']]);
  const workload = select('Workload', 'f-workload', [['', 'All workloads']]);
  const available = select('Available', 'f-available', YES_NO);
  const visible = select('Visible', 'f-visible', VISIBILITY);
  const search = /** @type {HTMLInputElement} */ (
    h('input', { id: 'f-search', name: 'search', type: 'search', placeholder: 'provider/model', autocomplete: 'off' })
  );
  // A no-break space holds the count's line until there is a count to show.
  const count = h('p', { className: 'count', 'aria-live': 'polite' }, '\u00a0');
  const filters = h(
    'form',
    { className: 'filters', role: 'search', 'aria-label': 'Filter models', onsubmit: (/** @type {Event} */ e) => e.preventDefault() },
    h('div', { className: 'field grow' }, h('label', { for: 'f-search' }, 'Search by reference'), search),
    provider.field,
    workload.field,
    available.field,
    visible.field,
  );
  replace(view, pageTitle('Models'), filters, status, count, table);

  /** @type {ModelRow[]} */
  let models = [];
  /** @type {Map<string, ProviderRow>} */
  let providers = new Map();

  async function load() {
    table.setAttribute('aria-busy', 'true');
    const [m, p] = await Promise.all([api('GET', `${ADMIN}/models`), api('GET', `${ADMIN}/model_providers`)]);
    models = m.models;
    providers = new Map(p.model_providers.map((/** @type {ProviderRow} */ row) => [row.id, row]));
    table.removeAttribute('aria-busy');
  }

  try {
    await load();
  } catch (error) {
    replace(table, errorBox(error));
    table.removeAttribute('aria-busy');
    return;
  }

  provider.el.append(...[...providers.values()].map((p) => h('option', { value: p.id }, p.display_name ?? p.id)));
  workload.el.append(...[...new Set(models.map((m) => m.workload))].sort().map((w) => h('option', { value: w }, w.replace(/_/g, ' '))));
  for (const control of [provider.el, workload.el, available.el, visible.el]) control.addEventListener('change', draw);
  search.addEventListener('input', draw);

  function shown() {
    const q = search.value.trim().toLowerCase();
    return models.filter(
      (m) =>
        (!q || m.ref.toLowerCase().includes(q) || (m.display_name ?? '').toLowerCase().includes(q)) &&
        (!provider.el.value || m.provider_id === provider.el.value) &&
        (!workload.el.value || m.workload === workload.el.value) &&
        (!available.el.value || String(m.available) === available.el.value) &&
        visibilityMatches(m, visible.el.value),
    );
  }

  /**
   * One command on a model with the version this page read; a 409 offers a reload and never retries (rule 2).
   * @param {ModelRow} model @param {'model_visibility' | 'model_availability'} what @param {boolean} value
   */
  async function act(model, what, value) {
    const p = providers.get(model.provider_id);
    const field = what === 'model_visibility' ? 'visible' : 'available';
    replace(status, h('p', { className: 'loading' }, 'Saving…'));
    try {
      await api('PUT', providerPath(model.provider_id, `/${what}`), {
        body: { command: { model: model.ref, [field]: value, expected_lock_version: p?.lock_version ?? null } },
      });
      await load();
      draw();
      const done = { model_visibility: value ? 'visible again' : 'hidden', model_availability: value ? 'restored' : 'marked invalid' }[
        what
      ];
      replace(status, h('p', { className: 'ok' }, `${model.ref} is ${done}.`));
    } catch (error) {
      replace(status, errorBox(error, { reload: () => void reload() }));
    }
  }

  async function reload() {
    replace(status, h('p', { className: 'loading' }, 'Reloading…'));
    try {
      await load();
      draw();
      replace(status, h('p', { className: 'ok' }, 'Reloaded: the table shows the current state.'));
    } catch (error) {
      replace(status, errorBox(error));
    }
  }

  function draw() {
    const rows = shown();
    count.textContent = `${rows.length} of ${models.length} models`;
    if (rows.length === 0) {
      replace(table, h('p', { className: 'empty' }, models.length === 0 ? 'No models are configured.' : 'No model matches these filters.'));
      return;
    }
    const body = h('tbody');
    for (const m of rows) {
      const { hidden: hiddenByAdmin, invalid } = marks(m);
      body.append(
        h(
          'tr',
          { 'data-ref': m.ref },
          h(
            'th',
            { scope: 'row' },
            h('span', { className: 'ref' }, m.ref),
            m.display_name ? h('span', { className: 'sub' }, m.display_name) : null,
          ),
          h('td', null, m.workload.replace(/_/g, ' ')),
          h('td', { 'data-col': 'visible' }, m.visible ? 'Yes' : 'No'),
          h(
            'td',
            { 'data-col': 'available' },
            h('span', { className: m.available ? 'pill ok' : 'pill off' }, m.available ? 'Available' : 'Unavailable'),
            // Always a second line, so a row keeps its height when a model is hidden or shown again.
            h('span', { className: 'sub' }, m.available ? 'Agents can use it' : reasonInWords(m.unavailable_reason)),
          ),
          h(
            'td',
            { className: 'actions' },
            h(
              'button',
              {
                type: 'button',
                className: 'secondary',
                'aria-label': `${hiddenByAdmin ? 'Unhide' : 'Hide'} ${m.ref}`,
                onclick: () => void act(m, 'model_visibility', hiddenByAdmin),
              },
              hiddenByAdmin ? 'Unhide' : 'Hide',
            ),
            h(
              'button',
              {
                type: 'button',
                className: 'secondary',
                'aria-label': `${invalid ? 'Restore' : 'Invalidate'} ${m.ref}`,
                onclick: () => void act(m, 'model_availability', invalid),
              },
              invalid ? 'Restore' : 'Invalidate',
            ),
          ),
        ),
      );
    }
    replace(
      table,
      h(
        'table',
        { className: 'data stack fixed', id: 'models-table' },
        h('caption', { className: 'visually-hidden' }, 'Models of the Account'),
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            h('th', { scope: 'col' }, 'Model'),
            h('th', { scope: 'col', className: 'c-workload' }, 'Workload'),
            h('th', { scope: 'col', className: 'c-visible' }, 'Visible'),
            h('th', { scope: 'col', className: 'c-availability' }, 'Availability'),
            h('th', { scope: 'col', className: 'c-actions' }, 'Actions'),
          ),
        ),
        body,
      ),
    );
  }
  draw();
}
