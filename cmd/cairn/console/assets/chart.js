// Small SVG charts drawn with DOM calls (no library, no inline styles: the
// page's Content-Security-Policy allows neither). Every chart has a text
// alternative: a table the caller renders beside it.

const SVG = 'http://www.w3.org/2000/svg';

function el(name, attrs = {}, text) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// stackedBars draws one bar per bucket, stacked by series, with a legend.
// series: [{name, counts: [..]}]; labels: one per bucket.
export function stackedBars({ title, labels, series, width = 720, height = 220 }) {
  const pad = { l: 44, r: 8, t: 8, b: 28 };
  const totals = labels.map((_, i) => series.reduce((s, x) => s + x.counts[i], 0));
  const top = Math.max(1, ...totals);
  const svg = el('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': title, class: 'chart' });
  const plotW = width - pad.l - pad.r;
  const plotH = height - pad.t - pad.b;
  const step = plotW / Math.max(1, labels.length);
  const barW = Math.max(1, step * 0.8);
  // Axis: 0 and the top count.
  for (const v of [0, top]) {
    const y = pad.t + plotH - (v / top) * plotH;
    svg.append(el('line', { x1: pad.l, x2: width - pad.r, y1: y, y2: y, class: 'grid' }));
    svg.append(el('text', { x: pad.l - 6, y: y + 4, 'text-anchor': 'end', class: 'axis' }, String(v)));
  }
  labels.forEach((label, i) => {
    let y = pad.t + plotH;
    series.forEach((s, k) => {
      const h = (s.counts[i] / top) * plotH;
      if (h > 0) {
        const r = el('rect', { x: pad.l + i * step + (step - barW) / 2, y: y - h, width: barW, height: h, class: `series-${k % 4}` });
        r.append(el('title', {}, `${label}: ${s.counts[i]} ${s.name}`));
        svg.append(r);
        y -= h;
      }
    });
    const every = Math.ceil(labels.length / 8);
    if (i % every === 0) {
      svg.append(el('text', { x: pad.l + i * step + step / 2, y: height - 8, 'text-anchor': 'middle', class: 'axis' }, label));
    }
  });
  return svg;
}

// legend is the list of series names with their swatches.
export function legend(names) {
  const ul = document.createElement('ul');
  ul.className = 'legend';
  names.forEach((n, k) => {
    const li = document.createElement('li');
    const sw = document.createElement('span');
    sw.className = `swatch series-${k % 4}`;
    sw.setAttribute('aria-hidden', 'true');
    li.append(sw, document.createTextNode(n));
    ul.append(li);
  });
  return ul;
}
