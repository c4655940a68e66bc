// Providers page: every provider of the Account with its lane, credential and model count (issue 19 item 4).
import { ADMIN, api } from './api.js';
import { errorBox, h, pageTitle, replace } from './ui.js';

/** @param {HTMLElement} view */
export async function render(view) {
  const table = h('div', { className: 'table-wrap', 'aria-busy': 'true' }, h('p', { className: 'loading' }, 'Loading providers…'));
  replace(view, pageTitle('Providers'), table);
  let answer;
  try {
    answer = await api('GET', `${ADMIN}/model_providers`);
  } catch (error) {
    replace(table, errorBox(error));
    return;
  } finally {
    table.removeAttribute('aria-busy');
  }
  /** @type {{ id: string, display_name: string | null, credentials: string | null, enabled: boolean, configured: boolean, reauthorization_required: boolean, models: number }[]} */
  const rows = answer.model_providers;
  if (rows.length === 0) {
    replace(table, h('p', { className: 'empty' }, 'No providers are configured.'));
    return;
  }
  const lane = { api_key: 'API key', oauth_tokens: 'OAuth', none: 'No credential' };
  replace(
    table,
    h(
      'table',
      { className: 'data', id: 'providers-table' },
      h('caption', { className: 'visually-hidden' }, 'Model providers'),
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          ...['Provider', 'Lane', 'Credential', 'Models'].map((t) =>
            h('th', { scope: 'col', className: t === 'Models' ? 'num' : null }, t),
          ),
        ),
      ),
      h(
        'tbody',
        null,
        ...rows.map((p) =>
          h(
            'tr',
            { 'data-provider': p.id },
            h(
              'th',
              { scope: 'row' },
              h('a', { href: `#/providers/${encodeURIComponent(p.id)}` }, p.display_name ?? p.id),
              h('span', { className: 'sub ref' }, p.id),
            ),
            h('td', null, h('span', { className: p.enabled ? 'pill ok' : 'pill off' }, p.enabled ? 'On' : 'Off')),
            h(
              'td',
              null,
              /** @type {Record<string, string>} */ (lane)[p.credentials ?? 'none'] ?? p.credentials,
              h(
                'span',
                { className: 'sub' },
                p.credentials === 'none'
                  ? 'not needed'
                  : p.reauthorization_required
                    ? 'needs authorizing again'
                    : p.configured
                      ? 'installed'
                      : 'not installed',
              ),
            ),
            h('td', { className: 'num' }, String(p.models)),
          ),
        ),
      ),
    ),
  );
}
