// mdk report: draws the charts from the JSON in #mdk-data, makes tables
// sortable, and records a self-check in #selfcheck (errors, blocked or
// attempted network loads, what every chart drew) that tests read.
(function () {
  'use strict';
  var t0 = performance.now();
  var check = { errors: [], violations: [], resources: [], charts: {}, renderMs: 0 };
  window.addEventListener('error', function (e) { check.errors.push(String(e.message || e)); });
  window.addEventListener('unhandledrejection', function (e) { check.errors.push('unhandled rejection: ' + String(e.reason)); });
  document.addEventListener('securitypolicyviolation', function (e) { check.violations.push(e.violatedDirective + ' ' + e.blockedURI); });
  var consoleError = console.error;
  console.error = function () { check.errors.push(Array.prototype.join.call(arguments, ' ')); return consoleError.apply(console, arguments); };

  // Okabe-Ito, the same palette as the Go figures (report/plot.go).
  var palette = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#F0E442'];
  var symbols = ['circle', 'rect', 'triangle', 'diamond', 'emptyCircle', 'roundRect', 'pin', 'arrow'];
  var D = JSON.parse(document.getElementById('mdk-data').textContent);
  var text = { fontFamily: '"Liberation Sans", "Helvetica Neue", Arial, sans-serif', fontSize: 12, color: '#1d232a' };
  var charts = {};

  function fmt(x, digits) {
    if (x === null || x === undefined) return '–';
    return Number(x).toLocaleString('en-US', { maximumFractionDigits: digits === undefined ? 3 : digits });
  }
  function pct(f) { return fmt(100 * f, 4) + '%'; }
  // niceMax rounds x up to 1, 2 or 5 times a power of ten, with a margin.
  function niceMax(x) {
    if (!(x > 0)) return 1;
    var p = Math.pow(10, Math.floor(Math.log10(x * 1.1)));
    var m = x * 1.1 / p;
    var steps = [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10];
    for (var i = 0; i < steps.length; i++) if (m <= steps[i]) return steps[i] * p;
    return 10 * p;
  }
  function make(id, option) {
    var el = document.getElementById(id);
    var c = echarts.init(el, null, { renderer: 'canvas' });
    option.animation = false;
    option.color = palette;
    option.textStyle = text;
    c.setOption(option);
    charts[id] = c;
    return c;
  }
  function axisName(name, gap) { return { name: name, nameLocation: 'middle', nameGap: gap || 30, nameTextStyle: { fontSize: 12 } }; }
  function merge(a, b) { for (var k in b) a[k] = b[k]; return a; }

  // curveSeries draws curves: per policy every setting as a point, and a
  // line through the policy's Pareto frontier (Go marks those points with
  // f); fx places x on the axis.
  function curveSeries(curves, fx) {
    var series = [];
    curves.forEach(function (c, i) {
      var col = palette[i % palette.length];
      series.push({
        name: c.policy, type: 'scatter', symbol: symbols[i % symbols.length], symbolSize: 7, color: col,
        emphasis: { focus: 'series' },
        data: c.points.map(function (p) { return { value: [fx(p.x), p.y], p: p }; })
      });
      series.push({
        name: c.policy, type: 'line', showSymbol: false, color: col, lineStyle: { width: 1.5 }, silent: true,
        data: c.points.filter(function (p) { return p.f; }).map(function (p) { return [fx(p.x), p.y]; })
      });
      // On a sample: each point's error bar (the savings bound, up and
      // down; the statistic's bound, often wide, is in the tooltip), one
      // line series of segments broken by gaps.
      var bars = [];
      c.points.forEach(function (p) {
        if (p.ye) bars.push([fx(p.x), Math.max(p.y - p.ye, 0)], [fx(p.x), p.y + p.ye], [fx(p.x), '-']);
      });
      if (bars.length) {
        series.push({
          name: c.policy, type: 'line', showSymbol: false, color: col, lineStyle: { width: 1, opacity: 0.45 }, silent: true,
          connectNulls: false, data: bars
        });
      }
    });
    return series;
  }

  // 1. Memory performance curves.
  (function () {
    var minPos = Infinity;
    D.curves.forEach(function (c) { c.points.forEach(function (p) { if (p.x > 0) minPos = Math.min(minPos, p.x); }); });
    D.targets.forEach(function (t) { if (t > 0) minPos = Math.min(minPos, t); });
    if (!isFinite(minPos)) minPos = 1;
    var floor = Math.pow(10, Math.floor(Math.log10(minPos)) - 1);
    var fx = function (x) { return D.logX && x <= 0 ? floor : x; };
    var series = curveSeries(D.curves, fx);
    if (series.length && D.targets.length) {
      series[0].markLine = {
        silent: true, symbol: 'none', lineStyle: { type: 'dashed', color: '#777' },
        label: { show: false }, // close targets' labels would overlap; the note above lists them
        data: D.targets.map(function (t) { return { xAxis: fx(t) }; })
      };
    }
    make('chart-mpc', {
      grid: { left: 70, right: 150, top: 30, bottom: 76 },
      legend: { orient: 'vertical', right: 10, top: 'middle', textStyle: text },
      tooltip: {
        trigger: 'item', confine: true,
        formatter: function (d) {
          var p = d.data.p;
          if (!p) return '';
          return '<b>' + d.seriesName + ':' + p.params + '</b><br>' +
            'savings: ' + fmt(p.y, 3) + '%' + (p.ye ? ' ±' + fmt(p.ye, 3) : '') + '<br>' +
            (p.xe ? D.x + ': ±' + fmt(p.xe, 4) + ' points<br>' : '') +
            'max_pr: ' + pct(p.max_pr) + '<br>p99_pr: ' + pct(p.p99_pr) + '<br>mean_pr: ' + pct(p.mean_pr) + '<br>' +
            'promotions: ' + fmt(p.promotions, 0) + '<br>saved page-windows: ' + fmt(p.saved, 0);
        }
      },
      xAxis: merge(merge({ type: D.logX ? 'log' : 'value', min: D.logX ? floor : 0, scale: true,
        axisLabel: { formatter: function (v) { return D.logX && v <= floor * 1.000001 ? '0' : fmt(v, 4); } } },
        axisName(D.xLabel + ' (%)')), {}),
      yAxis: merge({ type: 'value', min: 0 }, axisName('savings (% of alive page-windows)', 45)),
      // The initial view ends at twice the largest target (D.xView), where
      // the choices are made; zooming out (or the slider) shows every point.
      dataZoom: [{ type: 'inside', filterMode: 'none', startValue: D.logX ? floor : 0, endValue: D.xView || undefined },
        { type: 'slider', height: 18, bottom: 6, filterMode: 'none', startValue: D.logX ? floor : 0, endValue: D.xView || undefined }],
      series: series
    });
  })();

  // 1b. Net savings against slowdown on a tier, if the report has one.
  if (D.tierCurves) (function () {
    var series = curveSeries(D.tierCurves, function (x) { return x; });
    make('chart-tier', {
      grid: { left: 70, right: 150, top: 30, bottom: 76 },
      legend: { orient: 'vertical', right: 10, top: 'middle', textStyle: text },
      tooltip: {
        trigger: 'item', confine: true,
        formatter: function (d) {
          var p = d.data.p;
          if (!p) return '';
          return '<b>' + d.seriesName + ':' + p.params + '</b><br>' +
            'net savings: ' + fmt(p.y, 3) + '%<br>net saved memory: ' + fmt(p.net_bytes / 1048576, 3) + ' MiB<br>' +
            'slowdown: ' + fmt(p.x, 6) + '%<br>stall per window: ' + fmt(1e3 * (p.stall || 0), 6) + ' ms<br>' +
            'max_pr: ' + pct(p.max_pr) + '<br>promotions: ' + fmt(p.promotions, 0);
        }
      },
      xAxis: merge({ type: 'value', min: 0, scale: true, axisLabel: { formatter: function (v) { return fmt(v, 6); } } },
        axisName('slowdown on ' + D.tier + ' (% of the window stalled)')),
      yAxis: merge({ type: 'value', min: 0 }, axisName('net savings (% of alive page-windows)', 45)),
      dataZoom: [{ type: 'inside', filterMode: 'none' }, { type: 'slider', height: 18, bottom: 6, filterMode: 'none' }],
      series: series
    });
  })();

  // 1d. The design section: headroom by cause and by region as stacked
  // bars (one per setting), and the what-ifs' curves beside the original.
  if (D.design) (function () {
    var g = D.design;
    function bars(id, title, names, values) {
      make(id, {
        title: { text: title, left: 'center', textStyle: { fontSize: 13 } },
        grid: { left: 140, right: 30, top: 56, bottom: 50 },
        legend: { top: 24, textStyle: text, type: 'scroll' },
        tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' }, valueFormatter: function (v) { return fmt(v, 2) + ' pts'; } },
        xAxis: merge({ type: 'value' }, axisName('points of alive page-windows', 28)),
        yAxis: { type: 'category', data: g.settings, inverse: true },
        series: names.map(function (n, i) {
          return { name: n, type: 'bar', stack: 'headroom', data: values[i], emphasis: { focus: 'series' } };
        })
      });
    }
    bars('chart-design-cause', 'Headroom by cause', g.causes, g.byCause);
    bars('chart-design-region', 'Headroom by region', g.regions, g.byRegion);
    var id = function (x) { return x; };
    (g.whatIfs || []).forEach(function (w, k) {
      var series = [];
      D.curves.forEach(function (c, i) {
        series.push({ name: c.policy, type: 'line', showSymbol: false, color: palette[i % palette.length], lineStyle: { width: 1.5 }, silent: true,
          data: c.points.filter(function (p) { return p.f; }).map(function (p) { return [p.x, p.y]; }) });
      });
      w.curves.forEach(function (c, i) {
        series.push({ name: c.policy + ' (' + w.label + ')', type: 'line', showSymbol: true, symbolSize: 4, color: palette[i % palette.length],
          lineStyle: { width: 1.5, type: 'dashed' },
          data: c.points.filter(function (p) { return p.f; }).map(function (p) { return { value: [id(p.x), p.y], p: p }; }) });
      });
      make('chart-whatif-' + k, {
        title: { text: 'What-if: ' + w.label, left: 'center', textStyle: { fontSize: 13 } },
        grid: { left: 60, right: 20, top: 56, bottom: 76 },
        legend: { top: 24, textStyle: text, type: 'scroll' },
        tooltip: { trigger: 'item', confine: true, formatter: function (d) {
          var p = d.data && d.data.p;
          if (!p) return d.seriesName;
          return '<b>' + d.seriesName + ':' + p.params + '</b><br>savings: ' + fmt(p.y, 3) + '%<br>' + D.x + ': ' + fmt(p.x, 4) + '%';
        } },
        xAxis: merge({ type: 'value', min: 0, scale: true }, axisName(D.xLabel + ' (%)')),
        yAxis: merge({ type: 'value', min: 0 }, axisName('savings (%)', 40)),
        dataZoom: [{ type: 'inside', filterMode: 'none', startValue: 0, endValue: D.xView || undefined },
          { type: 'slider', height: 18, bottom: 6, filterMode: 'none', startValue: 0, endValue: D.xView || undefined }],
        series: series
      });
    });
  })();

  // 2. Per-window timeline of the chosen setting.
  var zoom = [{ type: 'inside' }, { type: 'slider', height: 18, bottom: 6 }];
  var winAxis = merge({ type: 'value', min: 0, max: Math.max(0, D.windows - 1) }, axisName('window (' + D.window + ' each)', 28));

  // 1c. An agent run: predicted (dashed) and measured (solid) per window.
  if (D.agent) (function () {
    var a = D.agent;
    function line(name, data, dashed, axis, col) {
      return { name: name, type: 'line', showSymbol: false, yAxisIndex: axis, color: col, data: data,
        lineStyle: { width: dashed ? 2 : 1.2, type: dashed ? 'dashed' : 'solid' } };
    }
    make('chart-agent', {
      title: { text: 'Agent run: ' + a.setting, left: 'center', textStyle: { fontSize: 13 } },
      grid: { left: 70, right: 80, top: 56, bottom: 64 },
      legend: { top: 24, textStyle: text },
      tooltip: { trigger: 'axis', valueFormatter: function (v) { return fmt(v, 0); } },
      dataZoom: zoom, xAxis: winAxis,
      yAxis: [merge({ type: 'value', min: 0 }, axisName('promotions', 50)), merge({ type: 'value', min: 0 }, axisName('saved pages', 60))],
      series: [
        line('promotions predicted', a.predPromotions, true, 0, palette[0]),
        line('promotions measured', a.promotions, false, 0, palette[0]),
        line('saved predicted', a.predSaved, true, 1, palette[1]),
        line('saved measured', a.saved, false, 1, palette[1])
      ]
    });
  })();
  // 1e. A run beside a recording's prediction: per window recorded,
  // aligned, counterfactual and measured; the causes of recorded -
  // measured as stacked bars; the Jaccard of the accessed sets; both
  // traces' curves with the three points; the memory as the kernel counts it.
  if (D.predicted) (function () {
    var q = D.predicted;
    function line(name, data, type, col) {
      return { name: name, type: 'line', showSymbol: false, color: col, data: data,
        lineStyle: { width: type === 'solid' ? 1.5 : 2, type: type } };
    }
    function perWindow(id, title, yName, series, digits) {
      make(id, {
        title: { text: title, left: 'center', textStyle: { fontSize: 13 } },
        grid: { left: 70, right: 30, top: 56, bottom: 64 },
        legend: { top: 24, textStyle: text, type: 'scroll' },
        tooltip: { trigger: 'axis', valueFormatter: function (v) { return fmt(v, digits || 0); } },
        dataZoom: zoom, xAxis: winAxis,
        yAxis: merge({ type: 'value', scale: false }, axisName(yName, 55)),
        series: series
      });
    }
    function four(rec, al, cf, meas) {
      return [line('recorded', rec, 'dashed', palette[0]), line('recorded, aligned', al, 'dotted', palette[5]),
        line('counterfactual', cf, 'dashed', palette[1]), line('measured', meas, 'solid', palette[6])];
    }
    perWindow('chart-predicted-promotions', 'Promotions: ' + q.setting, 'promotions', four(q.recPromotions, q.alignedPromotions, q.cfPromotions, q.measPromotions));
    perWindow('chart-predicted-saved', 'Saved page-windows: ' + q.setting, 'saved pages', four(q.recSaved, q.alignedSaved, q.cfSaved, q.measSaved));
    function causes(id, title, yName, vals, diff) {
      var s = q.causeNames.map(function (n, k) {
        return { name: n, type: 'bar', stack: 'causes', data: vals[k], color: palette[k], emphasis: { focus: 'series' } };
      });
      // recorded - measured, which the stacks add up to.
      s.push({ name: 'recorded − measured', type: 'line', showSymbol: true, symbolSize: 4, color: '#000', lineStyle: { width: 1 },
        data: diff });
      perWindow(id, title, yName, s);
    }
    causes('chart-predicted-cause-promotions', 'Recorded − measured promotions, by cause', 'promotions', q.causePromotions, q.diffPromotions);
    causes('chart-predicted-cause-saved', 'Recorded − measured saved page-windows, by cause', 'saved pages', q.causeSaved, q.diffSaved);
    perWindow('chart-predicted-jaccard', 'Accessed sets: Jaccard of recording and run', 'Jaccard', [
      line('same window', q.jaccard, 'solid', palette[0]), line('aligned', q.jaccardAligned, 'dashed', palette[1])], 3);
    var cs = [];
    function curveLines(curves, type, suffix) {
      curves.forEach(function (c, i) {
        cs.push({ name: c.policy + suffix, type: 'line', showSymbol: false, color: palette[i % palette.length], lineStyle: { width: 1.5, type: type },
          data: c.points.filter(function (p) { return p.f; }).map(function (p) { return { value: [p.x, p.y], p: p }; }) });
      });
    }
    curveLines(q.recCurves || [], 'dashed', ' (recording)');
    curveLines(D.curves, 'solid', ' (run)');
    q.points.forEach(function (p, k) {
      cs.push({ name: p.name, type: 'scatter', symbol: ['diamond', 'rect', 'triangle'][k], symbolSize: 12, color: ['#000', palette[1], palette[6]][k],
        data: [{ value: [p.x, p.y], p: { params: q.setting, x: p.x, y: p.y } }] });
    });
    make('chart-predicted-curves', {
      title: { text: 'Curves of the recording and of the run', left: 'center', textStyle: { fontSize: 13 } },
      grid: { left: 60, right: 20, top: 56, bottom: 76 },
      legend: { top: 24, textStyle: text, type: 'scroll' },
      tooltip: { trigger: 'item', confine: true, formatter: function (d) {
        var p = d.data && d.data.p;
        if (!p) return d.seriesName;
        return '<b>' + d.seriesName + ' ' + p.params + '</b><br>savings: ' + fmt(p.y, 3) + '%<br>' + D.x + ': ' + fmt(p.x, 4) + '%';
      } },
      xAxis: merge({ type: 'value', min: 0, scale: true }, axisName(D.xLabel + ' (%)')),
      yAxis: merge({ type: 'value', min: 0 }, axisName('savings (%)', 40)),
      dataZoom: [{ type: 'inside', filterMode: 'none' }, { type: 'slider', height: 18, bottom: 6, filterMode: 'none' }],
      series: cs
    });
    perWindow('chart-predicted-memory', 'Memory as the kernel counts it', 'MiB', q.memory.map(function (m, k) {
      return line(m.name, m.data, k === 0 ? 'dashed' : 'solid', palette[k]);
    }), 1);
  })();
  function showTimeline(i) {
    var t = D.timelines[i];
    if (!t) return;
    document.getElementById('setting-why').textContent = t.why ? '(' + t.why + ')' : '';
    var target = D.targets.length ? D.targets[0] : null;
    make('chart-pr', {
      title: { text: 'Promotion rate: ' + t.label, left: 'center', textStyle: { fontSize: 13 } },
      grid: { left: 70, right: 40, top: 56, bottom: 64 },
      legend: { top: 24, textStyle: text },
      tooltip: { trigger: 'axis', valueFormatter: function (v) { return fmt(v, 4) + '%'; } },
      dataZoom: zoom, xAxis: winAxis,
      // The target line must stay in view even when every window is far below it.
      yAxis: merge({ type: 'value', min: 0, max: function (v) { return target === null ? null : niceMax(Math.max(v.max, target)); } },
        axisName('promotion rate (%)', 45)),
      series: [
        { name: 'promotion rate', type: 'line', showSymbol: false, lineStyle: { width: 1 }, data: t.pr,
          markLine: target === null ? undefined : { silent: true, symbol: 'none', lineStyle: { type: 'dashed', color: '#555' },
            label: { position: 'insideEndTop', formatter: 'target ' + fmt(target, 4) + '%', color: '#555' }, data: [{ yAxis: target }] } }
      ]
    });
    make('chart-pages', {
      title: { text: 'Pages: ' + t.label, left: 'center', textStyle: { fontSize: 13 } },
      grid: { left: 80, right: 40, top: 56, bottom: 64 },
      legend: { top: 24, textStyle: text },
      tooltip: { trigger: 'axis', valueFormatter: function (v) { return fmt(v, 0); } },
      dataZoom: zoom, xAxis: winAxis,
      yAxis: merge({ type: 'value', min: 0 }, axisName('pages', 55)),
      series: [
        { name: 'resident', type: 'line', showSymbol: false, lineStyle: { width: 1 }, data: t.resident },
        { name: 'saved', type: 'line', showSymbol: false, lineStyle: { width: 1 }, areaStyle: { opacity: 0.15 }, data: t.saved },
        { name: 'accessed', type: 'line', showSymbol: false, lineStyle: { width: 1 }, data: t.accessed }
      ]
    });
  }
  var sel = document.getElementById('setting');
  sel.addEventListener('change', function () { showTimeline(+sel.value); });
  showTimeline(0);
  if (D.downsampled) {
    document.getElementById('ds-note').textContent = 'The trace has ' + fmt(D.windows, 0) +
      ' windows; charts draw each bucket\'s minimum and maximum (tables use every window).';
  }

  // 3. Working set and gap lengths.
  make('chart-ws', {
    grid: { left: 80, right: 20, top: 36, bottom: 64 },
    legend: { top: 4, textStyle: text },
    tooltip: { trigger: 'axis', valueFormatter: function (v) { return fmt(v, 0); } },
    dataZoom: zoom, xAxis: winAxis,
    yAxis: merge({ type: 'value', min: 0 }, axisName('pages', 55)),
    series: [
      { name: 'accessed', type: 'line', showSymbol: false, lineStyle: { width: 1 }, data: D.accessed },
      { name: 'alive', type: 'line', showSymbol: false, lineStyle: { width: 1 }, data: D.alive }
    ]
  });
  var nz = function (xs) { return xs.map(function (x) { return x > 0 ? x : null; }); };
  make('chart-gaps', {
    grid: { left: 80, right: 20, top: 36, bottom: 84 },
    legend: { top: 4, textStyle: text },
    tooltip: { trigger: 'axis', valueFormatter: function (v) { return fmt(v || 0, 0); } },
    xAxis: merge({ type: 'category', data: D.gapLabels, axisLabel: { interval: 0, rotate: D.gapLabels.length > 8 ? 40 : 0 } },
      axisName('idle length (windows)', 52)),
    yAxis: merge({ type: 'log', min: 1 }, axisName('gaps', 55)),
    series: [
      { name: 'closed', type: 'bar', data: nz(D.closedGaps) },
      { name: 'open', type: 'bar', data: nz(D.openGaps) }
    ]
  });
  window.addEventListener('resize', function () { for (var id in charts) charts[id].resize(); });

  // 4. Sortable tables.
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
    var ths = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(ths, function (th, col) {
      th.addEventListener('click', function () {
        var asc = th.getAttribute('aria-sort') !== 'ascending';
        Array.prototype.forEach.call(ths, function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var key = function (r) {
          var td = r.cells[col];
          if (!td) return null;
          var v = td.hasAttribute('data-v') ? td.getAttribute('data-v') : td.textContent;
          return v;
        };
        var numeric = rows.every(function (r) { var v = key(r); return v === null || v === '' || !isNaN(Number(v)); });
        rows.sort(function (a, b) {
          var x = key(a), y = key(b);
          var ex = x === null || x === '', ey = y === null || y === '';
          if (ex || ey) return ex === ey ? 0 : (ex ? 1 : -1); // empty last
          var c = numeric ? Number(x) - Number(y) : x.localeCompare(y);
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });

  // 5. Self-check.
  for (var id in charts) {
    var opt = charts[id].getOption();
    var points = 0;
    (opt.series || []).forEach(function (s) {
      (s.data || []).forEach(function (d) { if (d !== null && d !== undefined) points++; });
    });
    var canvas = document.querySelector('#' + id + ' canvas');
    var inked = 0;
    if (canvas && canvas.width && canvas.height) {
      var px = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      for (var k = 3; k < px.length; k += 4) if (px[k] !== 0) inked++;
    }
    check.charts[id] = { series: (opt.series || []).length, points: points, canvas: !!canvas, inked: inked };
  }
  // The tuning section, if any: its rows and BROKEN badges, and whether the
  // table agrees with the embedded report (one row per policy, a badge
  // exactly where the eval statistic breaks the SLO).
  if (D.tune) {
    var trows = document.querySelectorAll('#tune tbody tr');
    var policies = D.tune.policies || []; // null with controllers alone
    var want = policies.filter(function (c) { return c.found && !c.eval.meets_slo; }).map(function (c) { return c.policy; });
    var got = Array.prototype.filter.call(trows, function (r) { return r.querySelector('.badge.broken'); })
      .map(function (r) { return r.getAttribute('data-policy'); });
    check.tune = { rows: trows.length, policies: policies.length, broken: got,
      agrees: trows.length === policies.length && want.join() === got.join() };
  }
  // The design section, if any: its table's rows, and each bar's stacks
  // summed (they must add up to the row's headroom).
  if (D.design) {
    var sum = function (vals, r) { return vals.reduce(function (a, v) { return a + v[r]; }, 0); };
    check.design = { rows: document.querySelectorAll('#design-table tbody tr').length, headroom: D.design.headroom,
      causeSums: D.design.settings.map(function (_, r) { return sum(D.design.byCause, r); }),
      regionSums: D.design.settings.map(function (_, r) { return sum(D.design.byRegion, r); }) };
  }
  // The predicted section, if any: the per-window table's rows (a line of
  // promotions and one of saved each), how many of them add up (recorded -
  // measured = the difference = the sum of the causes, read from the
  // cells), and whether the table's total line and the totals table's
  // causes are those of the embedded JSON (mdk agent compare's).
  if (D.predicted) {
    var pj = JSON.parse(document.getElementById('predicted-json').textContent);
    var v = function (r, col) { return Number(r.querySelector('[data-col="' + col + '"]').getAttribute('data-v')); };
    var causeCols = ['shift', 'workload', 'refused', 'limits', 'back', 'slack'];
    var prow = document.querySelectorAll('#predicted-windows tr.pw, #predicted-windows tr.pw-saved');
    var adds = 0;
    Array.prototype.forEach.call(prow, function (r) {
      var c = causeCols.reduce(function (a, k) { return a + v(r, k); }, 0);
      if (v(r, 'recorded') - v(r, 'measured') === v(r, 'diff') && v(r, 'diff') === c) adds++;
    });
    var tp = document.querySelector('#predicted-windows tr.pw[data-window="total"]');
    var ts = document.querySelector('#predicted-windows tr.pw-saved[data-window="total"]');
    var ct = document.querySelectorAll('#predicted-causes tbody tr');
    var same = !!tp && !!ts && ct.length === 2;
    var names = { recorded: 'recorded', counterfactual: 'counterfactual', measured: 'measured', shift: 'shift', workload: 'workload',
      refused: 'refused', limits: 'limits', back: 'back', slack: 'slack' };
    for (var k in names) {
      if (!same) break;
      var want = pj.total[k];
      same = v(tp, names[k]) === want.promotions && v(ts, names[k]) === want.saved;
    }
    causeCols.forEach(function (k) { if (same) same = v(ct[0], k) === pj.total[k].promotions && v(ct[1], k) === pj.total[k].saved; });
    check.predicted = { rows: prow.length, adds: adds, windows: pj.windows.length, agrees: same,
      memoryRows: document.querySelectorAll('#predicted-memory tbody tr').length };
  }
  // The controllers section, if any: per controller, its table's rows,
  // whether the table and its sentence are shown, and the controller row's
  // savings and headroom beside OPP's savings (the headroom must be their
  // difference).
  var ctables = document.querySelectorAll('table.controller-table');
  if (ctables.length) {
    var cell = function (r, col) {
      var c = r && r.querySelector('[data-col="' + col + '"]');
      return c && c.getAttribute('data-v') !== '' ? Number(c.getAttribute('data-v')) : null;
    };
    check.controllers = Array.prototype.map.call(ctables, function (tb) {
      var ctl = tb.querySelector('tr[data-what="controller"]'), opp = tb.querySelector('tr[data-policy="opp"]');
      var s = document.querySelector('p.realised[data-controller="' + tb.getAttribute('data-controller') + '"]');
      return { rows: tb.querySelectorAll('tbody tr').length, shown: tb.offsetHeight > 0 && !!s && s.offsetHeight > 0,
        sentence: s ? s.textContent : '', savings: cell(ctl, 'savings'), headroom: cell(ctl, 'headroom'), oppSavings: cell(opp, 'savings') };
    });
  }
  // A test opens the page with #sorttest: sort the best-setting table by
  // savings, descending (two clicks), and record the order.
  if (location.hash === '#sorttest') {
    var th = document.querySelector('#best thead th:nth-child(4)');
    th.click(); th.click();
    check.sorted = Array.prototype.map.call(document.querySelectorAll('#best tbody tr'), function (r) {
      return r.cells[3] && r.cells[3].hasAttribute('data-v') ? r.cells[3].getAttribute('data-v') : '';
    });
  }
  check.resources = performance.getEntriesByType('resource').map(function (e) { return e.name; });
  check.renderMs = performance.now() - t0;
  check.sinceNavigationMs = performance.now();
  document.getElementById('selfcheck').textContent = JSON.stringify(check);
})();
