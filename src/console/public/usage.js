// Usage and cost: tokens and estimated cost per day and per model in the Account's cost unit, a chart and tables,
// filters, CSV export, and the configure-once cost unit (issue 19 item 5).
import { ADMIN, api } from './api.js';
import { errorBox, formatInt, h, pageTitle, replace } from './ui.js';

/**
 * @typedef {{ requests: number, input_tokens: number, output_tokens: number, cached_input_tokens: number, cost: string | null }} Figures
 * @typedef {Figures & { day: string, model: string, failed: number }} DayModel
 * @typedef {{ from: string, to: string, cost_unit: string | null, totals: Figures, by_day_and_model: DayModel[] }} Usage
 */

const DAY = 86_400_000;
const SVG = 'http://www.w3.org/2000/svg';

/** @param {number} ms */
const isoDay = (ms) => new Date(ms).toISOString().slice(0, 10);

/**
 * Adds two exact decimal strings (costs are decimal text; floats would drift). Null stays null: an unknown part
 * makes the sum unknown, as the API does.
 * @param {string | null} a @param {string | null} b
 */
export function addDecimal(a, b) {
  if (a === null || b === null) return null;
  const scale = Math.max((a.split('.')[1] ?? '').length, (b.split('.')[1] ?? '').length);
  /** @param {string} x */
  const digits = (x) => {
    const [whole = '0', frac = ''] = x.split('.');
    return BigInt(whole + frac.padEnd(scale, '0'));
  };
  const sum = (digits(a) + digits(b)).toString().padStart(scale + 1, '0');
  if (scale === 0) return sum;
  const whole = sum.slice(0, -scale);
  const frac = sum.slice(-scale).replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : whole;
}

/** @param {string | null} cost @param {string | null} unit */
const money = (cost, unit) => (cost === null ? 'unknown' : `${cost}${unit ? ` ${unit}` : ''}`);

/** Sums rows into figures keyed by `key`. @param {DayModel[]} rows @param {(row: DayModel) => string} key */
function group(rows, key) {
  /** @type {Map<string, Figures & { failed: number }>} */
  const out = new Map();
  for (const row of rows) {
    const k = key(row);
    const g = out.get(k) ?? { requests: 0, input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, cost: '0', failed: 0 };
    g.requests += row.requests;
    g.input_tokens += row.input_tokens;
    g.output_tokens += row.output_tokens;
    g.cached_input_tokens += row.cached_input_tokens;
    g.failed += row.failed;
    g.cost = addDecimal(g.cost, row.cost);
    out.set(k, g);
  }
  return out;
}

/** CSV text of the rows (RFC 4180 quoting). @param {Usage} usage */
export function toCsv(usage) {
  /** @param {unknown} v */
  const cell = (v) => {
    const text = v === null || v === undefined ? '' : String(v);
    return /[",\n\r]/.test(text) || /^[=+\-@]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  const head = ['day', 'model', 'requests', 'failed', 'input_tokens', 'output_tokens', 'cached_input_tokens', 'cost', 'cost_unit'];
  const lines = [head.join(',')];
  for (const r of usage.by_day_and_model)
    lines.push(
      [r.day, r.model, r.requests, r.failed, r.input_tokens, r.output_tokens, r.cached_input_tokens, r.cost, usage.cost_unit]
        .map(cell)
        .join(','),
    );
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * A bar chart of input and output tokens per day (stacked), drawn as SVG elements (no inline style, CSP-clean).
 * Drawn at the width it is shown at (no scaling), so its labels stay readable from 360 px to a desktop.
 * @param {{ day: string, input: number, output: number }[]} days @param {number} width
 */
function chart(days, width) {
  const height = 240;
  const pad = { left: 56, right: 8, top: 12, bottom: 28 };
  const max = Math.max(1, ...days.map((d) => d.input + d.output));
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('class', 'chart');
  svg.setAttribute('role', 'img');
  svg.setAttribute('id', 'usage-chart');
  const total = days.reduce((n, d) => n + d.input + d.output, 0);
  svg.setAttribute(
    'aria-label',
    `Tokens per day from ${days[0]?.day ?? ''} to ${days.at(-1)?.day ?? ''}: ${formatInt(total)} in all. The table below has the figures.`,
  );
  /** @param {string} tag @param {Record<string, string | number>} attrs */
  const el = (tag, attrs) => {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    svg.append(node);
    return node;
  };
  const plotH = height - pad.top - pad.bottom;
  for (const f of [0, 0.5, 1]) {
    const y = pad.top + plotH * (1 - f);
    el('line', { x1: pad.left, x2: width - pad.right, y1: y, y2: y });
    el('text', { x: pad.left - 6, y: y + 4, 'text-anchor': 'end' }).textContent = formatInt(Math.round(max * f));
  }
  const slot = (width - pad.left - pad.right) / Math.max(1, days.length);
  const barW = Math.max(1, slot * 0.7);
  days.forEach((d, i) => {
    const x = pad.left + i * slot + (slot - barW) / 2;
    const hIn = (d.input / max) * plotH;
    const hOut = (d.output / max) * plotH;
    const g = document.createElementNS(SVG, 'g');
    g.setAttribute('data-day', d.day);
    g.setAttribute('data-tokens', String(d.input + d.output));
    const title = document.createElementNS(SVG, 'title');
    title.textContent = `${d.day}: ${formatInt(d.input)} input, ${formatInt(d.output)} output tokens`;
    g.append(title);
    for (const [hh, y, cls] of /** @type {[number, number, string][]} */ ([
      [hIn, pad.top + plotH - hIn, 'bar-rect'],
      [hOut, pad.top + plotH - hIn - hOut, 'bar-rect second'],
    ])) {
      const r = document.createElementNS(SVG, 'rect');
      r.setAttribute('x', String(x));
      r.setAttribute('y', String(y));
      r.setAttribute('width', String(barW));
      r.setAttribute('height', String(hh));
      r.setAttribute('class', cls);
      g.append(r);
    }
    svg.append(g);
  });
  const step = Math.max(1, Math.ceil(days.length / Math.max(2, Math.floor(width / 90))));
  days.forEach((d, i) => {
    if (i % step !== 0) return;
    el('text', { x: pad.left + i * slot + slot / 2, y: height - 8, 'text-anchor': 'middle' }).textContent = d.day.slice(5);
  });
  return svg;
}

/**
 * @param {string[]} head @param {(string | Node)[][] | string} rows the rows, or a sentence saying why there are none
 * @param {string} id @param {string} caption
 * @param {number} textColumns the leading columns holding text (the rest are right-aligned figures)
 */
function table(head, rows, id, caption, textColumns) {
  const body =
    typeof rows === 'string'
      ? [h('tr', null, h('td', { colspan: head.length, className: 'empty' }, rows))]
      : rows.map((cells) =>
          h(
            'tr',
            null,
            ...cells.map((c, i) => (i === 0 ? h('th', { scope: 'row' }, c) : h('td', { className: i >= textColumns ? 'num' : null }, c))),
          ),
        );
  return h(
    'table',
    { className: 'data', id },
    h('caption', { className: 'visually-hidden' }, caption),
    h('thead', null, h('tr', null, ...head.map((t, i) => h('th', { scope: 'col', className: i >= textColumns ? 'num' : null }, t)))),
    h('tbody', null, ...body),
  );
}

/** @param {HTMLElement} view */
export async function render(view) {
  const now = Date.now();
  const from = /** @type {HTMLInputElement} */ (h('input', { id: 'u-from', name: 'from', type: 'date', value: isoDay(now - 29 * DAY) }));
  const to = /** @type {HTMLInputElement} */ (h('input', { id: 'u-to', name: 'to', type: 'date', value: isoDay(now) }));
  const model = /** @type {HTMLInputElement} */ (
    h('input', { id: 'u-model', name: 'model', type: 'text', list: 'u-models', autocomplete: 'off', placeholder: 'provider/model' })
  );
  const human = /** @type {HTMLInputElement} */ (
    h('input', { id: 'u-human', name: 'human', type: 'text', autocomplete: 'off', placeholder: 'Human id' })
  );
  const models = h('datalist', { id: 'u-models' });
  const exportButton = /** @type {HTMLButtonElement} */ (
    h('button', { type: 'button', className: 'secondary', id: 'u-export', disabled: true }, 'Export CSV')
  );
  const filters = h(
    'form',
    { className: 'filters', 'aria-label': 'Usage filters' },
    h('div', { className: 'field' }, h('label', { for: 'u-from' }, 'From (UTC day)'), from),
    h('div', { className: 'field' }, h('label', { for: 'u-to' }, 'To (UTC day, included)'), to),
    h('div', { className: 'field grow' }, h('label', { for: 'u-model' }, 'Model'), model, models),
    h('div', { className: 'field grow' }, h('label', { for: 'u-human' }, 'Human'), human),
    h('button', { type: 'submit' }, 'Show'),
    exportButton,
  );
  // The cost unit sits above everything that redraws, one line whether loading or configured; the results below
  // keep the same frame (totals, chart of a fixed height, tables last) for every answer, empty ones included, so a
  // redraw never moves what the reader is looking at.
  const unit = h(
    'section',
    { className: 'panel unit', 'aria-labelledby': 'h-unit' },
    h('h2', { id: 'h-unit' }, 'Cost unit'),
    h('p', { id: 'cost-unit', className: 'loading' }, 'Loading…'),
  );
  const status = h('div', { className: 'status', 'aria-live': 'polite' });
  const out = h('div', { id: 'usage-out', className: 'region', 'aria-busy': 'true' }, h('p', { className: 'loading' }, 'Loading usage…'));
  replace(view, pageTitle('Usage and cost'), unit, filters, status, out);

  /** @type {Usage | null} */
  let current = null;
  /** The range `current` was drawn for, and the width its chart was drawn at. */
  let drawnRange = { fromMs: 0, toMs: 0 };
  let drawnWidth = 0;
  // The chart is drawn at the width it is shown at; when that width changes (a rotated phone, a resized window), it
  // is drawn again from the answer already read.
  new window.ResizeObserver(() => {
    if (current && out.isConnected && Math.abs(out.clientWidth - drawnWidth) > 8) draw(current, drawnRange.fromMs, drawnRange.toMs);
  }).observe(out);

  async function load() {
    out.setAttribute('aria-busy', 'true');
    replace(status);
    const fromMs = Date.parse(`${from.value}T00:00:00Z`);
    const toMs = Date.parse(`${to.value}T00:00:00Z`) + DAY;
    if (Number.isNaN(fromMs) || Number.isNaN(toMs)) {
      replace(status, h('div', { className: 'error', role: 'alert' }, 'Choose both days of the range.'));
      return;
    }
    try {
      /** @type {Usage} */
      const usage = (
        await api('GET', `${ADMIN}/usage`, {
          query: {
            from: new Date(fromMs).toISOString(),
            to: new Date(toMs).toISOString(),
            model: model.value.trim(),
            human_id: human.value.trim(),
          },
        })
      ).usage;
      current = usage;
      draw(usage, fromMs, toMs);
      exportButton.disabled = false;
    } catch (error) {
      replace(status, errorBox(error));
    } finally {
      out.removeAttribute('aria-busy');
    }
  }

  /** @param {Usage} usage @param {number} fromMs @param {number} toMs */
  function draw(usage, fromMs, toMs) {
    drawnRange = { fromMs, toMs };
    const byDay = group(usage.by_day_and_model, (r) => r.day);
    const byModel = group(usage.by_day_and_model, (r) => r.model);
    replace(models, ...[...byModel.keys()].map((m) => h('option', { value: m })));
    const t = usage.totals;
    const summary = h(
      'dl',
      { className: 'facts', id: 'usage-totals' },
      h('dt', null, 'Requests'),
      h('dd', { 'data-field': 'requests' }, formatInt(t.requests)),
      h('dt', null, 'Input tokens'),
      h('dd', { 'data-field': 'input_tokens' }, formatInt(t.input_tokens)),
      h('dt', null, 'Output tokens'),
      h('dd', { 'data-field': 'output_tokens' }, formatInt(t.output_tokens)),
      h('dt', null, 'Estimated cost'),
      h('dd', { 'data-field': 'cost' }, money(t.cost, usage.cost_unit)),
    );
    /** @type {{ day: string, input: number, output: number }[]} */
    const days = [];
    for (let ms = fromMs; ms < toMs; ms += DAY) {
      const g = byDay.get(isoDay(ms));
      days.push({ day: isoDay(ms), input: g?.input_tokens ?? 0, output: g?.output_tokens ?? 0 });
    }
    const none = usage.by_day_and_model.length === 0 ? 'No inference requests in this range.' : null;
    const unitNote = usage.cost_unit ? `Costs are estimates in ${usage.cost_unit}.` : 'No cost unit is configured, so costs are unknown.';
    replace(
      out,
      summary,
      h('h2', null, 'Tokens per day'),
      h(
        'div',
        { className: 'legend', 'aria-hidden': 'true' },
        h('span', null, h('span', { className: 'swatch' }), 'input'),
        h('span', null, h('span', { className: 'swatch second' }), 'output'),
      ),
      chart(days, (drawnWidth = Math.max(280, Math.round(out.clientWidth || 800)))),
      h('h2', null, 'Per model'),
      h('p', { className: 'hint' }, unitNote),
      h(
        'div',
        { className: 'table-wrap' },
        table(
          ['Model', 'Requests', 'Failed', 'Input tokens', 'Output tokens', 'Cost'],
          none ??
            [...byModel.entries()].map(([m, g]) => [
              h('span', { className: 'ref' }, m),
              formatInt(g.requests),
              formatInt(g.failed),
              formatInt(g.input_tokens),
              formatInt(g.output_tokens),
              money(g.cost, usage.cost_unit),
            ]),
          'usage-by-model',
          'Usage per model',
          1,
        ),
      ),
      h('h2', null, 'Per day and model'),
      h(
        'div',
        { className: 'table-wrap' },
        table(
          ['Day', 'Model', 'Requests', 'Failed', 'Input tokens', 'Output tokens', 'Cached input', 'Cost'],
          none ??
            usage.by_day_and_model.map((r) => [
              r.day,
              h('span', { className: 'ref' }, r.model),
              formatInt(r.requests),
              formatInt(r.failed),
              formatInt(r.input_tokens),
              formatInt(r.output_tokens),
              formatInt(r.cached_input_tokens),
              money(r.cost, usage.cost_unit),
            ]),
          'usage-by-day',
          'Usage per day and model',
          2,
        ),
      ),
    );
  }

  filters.addEventListener('submit', (event) => {
    event.preventDefault();
    void load();
  });
  exportButton.addEventListener('click', () => {
    if (!current) return;
    const blob = new Blob([toCsv(current)], { type: 'text/csv' });
    const link = h('a', { href: URL.createObjectURL(blob), download: `usage-${current.from.slice(0, 10)}-${current.to.slice(0, 10)}.csv` });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.getAttribute('href') ?? ''), 1000);
  });

  async function drawUnit() {
    try {
      const { account } = await api('GET', `${ADMIN}/account/cost_unit`);
      if (account.cost_unit) {
        replace(unit, h('h2', { id: 'h-unit' }, 'Cost unit'), h('p', { id: 'cost-unit' }, `Estimated costs are in ${account.cost_unit}.`));
        return;
      }
      const input = /** @type {HTMLInputElement} */ (
        h('input', {
          id: 'cost-unit-input',
          name: 'cost_unit',
          type: 'text',
          autocomplete: 'off',
          placeholder: 'USD',
          'aria-describedby': 'cost-unit-hint',
        })
      );
      const form = h(
        'form',
        { className: 'row' },
        h('div', { className: 'field' }, h('label', { for: 'cost-unit-input' }, 'Cost unit'), input),
        h('button', { type: 'submit' }, 'Configure'),
      );
      const formStatus = h('div', { 'aria-live': 'polite' });
      form.addEventListener('submit', (event) => {
        event.preventDefault();
        api('PUT', `${ADMIN}/account/cost_unit`, { body: { command: { cost_unit: input.value.trim() } } }).then(
          () => void drawUnit().then(load),
          (error) => replace(formStatus, errorBox(error)),
        );
      });
      replace(
        unit,
        h('h2', { id: 'h-unit' }, 'Cost unit'),
        h('p', { id: 'cost-unit' }, 'No cost unit is configured: costs cannot be estimated.'),
        form,
        h(
          'p',
          { className: 'hint', id: 'cost-unit-hint' },
          'A currency code such as USD or EUR. It can be configured once and never replaced.',
        ),
        formStatus,
      );
    } catch (error) {
      replace(unit, h('h2', { id: 'h-unit' }, 'Cost unit'), errorBox(error));
    }
  }

  await Promise.all([load(), drawUnit()]);
}
