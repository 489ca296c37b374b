#!/usr/bin/env node
// browse.mjs: opens locksim's HTML pages in a real headless Chromium and checks them, driving it
// over the Chrome DevTools Protocol on --remote-debugging-pipe (no npm packages, no network).
//
//   node tests/browser/browse.mjs [options] PLAN.json ... [--case NAME STEPS...] ...
//   node tests/browser/browse.mjs [options] --open PATH --expect SEL ... (steps as arguments)
//
// Everything runs in one browser, as cases: each case is a list of steps (the first an open), run
// in a tab with a DevTools session of its own, from about:blank back to about:blank, so that
// nothing of one case (its pages, their scripts, the failures they report) reaches another;
// --jobs N runs N cases at a time (default 1), each lane of cases in a window of its own. A case
// passes if all its steps do; a case with an expected failure ("expect_failure": TEXT, or
// --expect-failure TEXT) must instead fail, with TEXT in its failure (the page, the step and
// the message, on one line): a bad page shown to be caught. The run passes if every case ended
// as expected. A plan is {"steps": [...], "expect_failure": TEXT} (one case, named after the
// plan file; expect_failure optional) or {"cases": [{"name": N, "steps": [...], "expect_failure":
// TEXT}, ...]}, with "page_timeout_ms": 20000, "viewport": "1280x900", "base": DIR,
// "screenshots": DIR for all its cases. Relative paths to open resolve against "base" (default:
// the plan's directory; on the command line: the working directory); relative screenshot paths
// against "screenshots" (default: base). Steps, one action each:
//   {"open": "index.html"}                         a path or a file:/http(s): URL; waits for load
//   {"expect": SEL, "count": 1, "max": N, "within": SEL, "text": "...", "visible": true|"fully",
//    "timeout_ms": 2000}                           at least count (at most max) elements match SEL
//                                                  (inside the first match of within; whose text
//                                                  contains text); with visible, that many are
//                                                  shown in the viewport (partly, or fully), not
//                                                  clipped away by an overflow ancestor or an SVG
//                                                  clip-path of one rectangle; polled
//                                                  until true or timeout_ms
//   {"click": SEL, "navigates": true, "timeout_ms": 10000}
//                                                  a real mouse click (Input.dispatchMouseEvent)
//                                                  at the centre of the first match, scrolled into
//                                                  view; fails if that point is covered by another
//                                                  element or the element has no size; waits for
//                                                  the navigation (a new document's load event, or
//                                                  a same-document jump to a #hash)
//   {"target": ID, "visible": true, "timeout_ms": 2000}
//                                                  location.hash is #ID and :target is element ID,
//                                                  in the viewport (unless visible is false)
//   {"images_loaded": SEL}                         every img matching SEL (at least one) decoded
//   {"links_resolve": SEL}                         every a[href] matching SEL (at least one) leads
//                                                  somewhere: an existing file (file: URLs) or an
//                                                  element of this page (#id); other URLs fail
//   {"screenshot": PATH, "full_page": true}        PNG of the whole page (or the viewport)
//   {"hover": SEL, "within": SEL}                  a real mouse move (Input.dispatchMouseEvent)
//                                                  onto the centre of the visible part of the first
//                                                  match shown (scrolled into view if none is);
//                                                  fails if another element is on top there
//   {"wheel": SEL, "delta_y": -480, "ctrl": true, "shift": false}
//                                                  a real wheel turn there (negative: away from the
//                                                  user), with Ctrl or Shift held
//   {"measure": SEL, "attribute": NAME | "style": PROPERTY | "box": "width"|"height",
//    "within": SEL, "at_least": N, "at_most": N, "less_than": SAVED, "hue": "red", "text": "...",
//    "save": NAME, "timeout_ms": 2000}            reads the first match's attribute, computed style
//                                                  property, or the size in CSS px of its part in
//                                                  view (cut by the viewport, overflow and an SVG
//                                                  clip-path) and checks it: a number at least or at
//                                                  most N, less than what an earlier measure of the
//                                                  case saved as SAVED, a colour of that hue (red,
//                                                  orange, green, grey), containing text; polled
//                                                  until true or timeout_ms; save keeps it
//
// On the command line each of --open, --expect, --click, --target, --images-loaded,
// --links-resolve, --screenshot, --hover, --wheel, --measure starts a step and --count N, --max N,
// --within SEL, --text T, --visible, --fully-visible, --hidden-ok, --no-navigation,
// --viewport-only, --timeout-ms N, --delta-y N, --ctrl, --shift, --attribute NAME, --style PROP,
// --box-width, --box-height, --at-least N, --at-most N, --less-than NAME, --hue H, --save NAME
// modify the step before them; --case NAME starts a case (steps before any --case make a case named
// "arguments"), and --expect-failure TEXT gives the case its expected failure; --page-timeout-ms
// N, --viewport WxH, --base DIR, --screenshots DIR (for the plans' cases too) and --jobs N are
// global. Each case ends with one line: "ok: case "NAME": passed", "ok: case "NAME": failed as
// expected: FAILURE" or "FAILED: case "NAME": ..." saying why; several end with a count.
//
// Every page is watched from the moment it opens: an uncaught exception, console.error or
// console.assert, an error in the browser's log, a failed load (a broken <img>, stylesheet or
// script) or a response with status >= 400 fails it, as does a JavaScript dialog or a crash.
// Exit status: 0 every case ended as expected; 1 some did not (a page failed: the line names the
// page and the failure; or a case that was to fail passed, or failed otherwise); 2 bad usage or
// plan; 3 the browser could not be started or died (the run stops there). Each page (an open and
// the steps after it) has a time budget (page_timeout_ms, default 20 s); every wait is bounded by
// it. Chromium runs in a process group and a directory (profile, temporary files) of its own under
// $TMPDIR (or /tmp, if $TMPDIR is too deep for a socket path), both removed on every exit: success,
// failure, error, SIGINT, SIGTERM or SIGHUP.
//
// The browser: $LOCKSIM_CHROMIUM, else Debian's /usr/lib/chromium/chromium (the binary behind
// the /usr/bin/chromium shell wrapper), else chromium, chromium-browser, google-chrome on PATH.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const EXIT_PAGE = 1;
const EXIT_USAGE = 2;
const EXIT_BROWSER = 3;
const LAUNCH_TIMEOUT_MS = 20000;
const DEFAULT_PAGE_TIMEOUT_MS = 20000;
const DEFAULT_EXPECT_TIMEOUT_MS = 2000;
const DEFAULT_CLICK_TIMEOUT_MS = 10000;
const DEFAULT_JOBS = 1;
const SETTLE_MS = 150; // quiet time after a load before its failures are judged
const MAX_SCREENSHOT_HEIGHT = 16384;

class PageFailure extends Error {}
class UsageError extends Error {}
class BrowserError extends Error {}

// ---------------------------------------------------------------------------------------------
// The plan: from a JSON file or from command-line steps, validated before the browser starts.

const ACTIONS = {
  open: ['timeout_ms'],
  expect: ['count', 'max', 'within', 'text', 'visible', 'timeout_ms'],
  click: ['navigates', 'timeout_ms'],
  target: ['visible', 'timeout_ms'],
  images_loaded: ['timeout_ms'],
  links_resolve: [],
  screenshot: ['full_page'],
  hover: ['within', 'timeout_ms'],
  wheel: ['within', 'delta_y', 'ctrl', 'shift', 'timeout_ms'],
  measure: ['within', 'attribute', 'style', 'box', 'at_least', 'at_most', 'less_than', 'save',
            'hue', 'text', 'timeout_ms'],
};
const HUES = ['red', 'orange', 'green', 'grey'];

function parseViewport(v) {
  if (typeof v === 'string') {
    const m = /^(\d+)x(\d+)$/.exec(v);
    if (!m) throw new UsageError(`viewport: expected WIDTHxHEIGHT, got "${v}"`);
    v = { width: Number(m[1]), height: Number(m[2]) };
  }
  if (!v || !Number.isInteger(v.width) || !Number.isInteger(v.height) || v.width < 100 ||
      v.height < 100 || v.width > 8000 || v.height > 8000) {
    throw new UsageError(`viewport: width and height must be integers in 100..8000`);
  }
  return v;
}

function nonNegativeInt(value, what) {
  if (!Number.isInteger(value) || value < 0) {
    throw new UsageError(`${what}: expected a non-negative integer, got ${JSON.stringify(value)}`);
  }
  return value;
}

function validateStep(step, where) {
  if (!step || typeof step !== 'object' || Array.isArray(step)) {
    throw new UsageError(`${where}: a step is an object`);
  }
  const actions = Object.keys(step).filter((k) => Object.hasOwn(ACTIONS, k));
  if (actions.length !== 1) {
    throw new UsageError(`${where}: a step has exactly one of ${Object.keys(ACTIONS).join(', ')}` +
                         ` (got ${actions.length ? actions.join(', ') : 'none'})`);
  }
  const action = actions[0];
  for (const key of Object.keys(step)) {
    if (key !== action && !ACTIONS[action].includes(key)) {
      throw new UsageError(`${where}: "${key}" is not an option of ${action} ` +
                           `(options: ${ACTIONS[action].join(', ') || 'none'})`);
    }
  }
  if (typeof step[action] !== 'string' || step[action] === '') {
    throw new UsageError(`${where}: ${action} takes a non-empty string`);
  }
  for (const key of ['count', 'max', 'timeout_ms']) {
    if (key in step) nonNegativeInt(step[key], `${where}.${key}`);
  }
  if ('count' in step && 'max' in step && step.count > step.max) {
    throw new UsageError(`${where}: count ${step.count} is more than max ${step.max}`);
  }
  if ('within' in step && (typeof step.within !== 'string' || !step.within)) {
    throw new UsageError(`${where}.within: a selector`);
  }
  if ('text' in step && typeof step.text !== 'string') {
    throw new UsageError(`${where}.text: a string`);
  }
  if ('visible' in step && ![true, false, 'fully'].includes(step.visible)) {
    throw new UsageError(`${where}.visible: true, false or "fully"`);
  }
  for (const key of ['navigates', 'full_page', 'ctrl', 'shift']) {
    if (key in step && typeof step[key] !== 'boolean') {
      throw new UsageError(`${where}.${key}: true or false`);
    }
  }
  for (const key of ['delta_y', 'at_least', 'at_most']) {
    if (key in step && (typeof step[key] !== 'number' || !Number.isFinite(step[key]))) {
      throw new UsageError(`${where}.${key}: a number, got ${JSON.stringify(step[key])}`);
    }
  }
  for (const key of ['attribute', 'style', 'less_than', 'save']) {
    if (key in step && (typeof step[key] !== 'string' || !step[key])) {
      throw new UsageError(`${where}.${key}: a non-empty string`);
    }
  }
  if (action === 'wheel' && !('delta_y' in step)) {
    throw new UsageError(`${where}: a wheel step needs delta_y (negative: up, which zooms in)`);
  }
  if (action === 'measure') {
    const what = ['attribute', 'style', 'box'].filter((k) => k in step);
    if (what.length !== 1) {
      throw new UsageError(`${where}: a measure step reads exactly one of attribute, style, box`);
    }
    if ('box' in step && !['width', 'height'].includes(step.box)) {
      throw new UsageError(`${where}.box: "width" or "height"`);
    }
    if ('hue' in step && !HUES.includes(step.hue)) {
      throw new UsageError(`${where}.hue: one of ${HUES.join(', ')}`);
    }
  }
  return { action, ...step };
}

const PLAN_KEYS = ['steps', 'cases', 'expect_failure', 'page_timeout_ms', 'viewport', 'base',
                   'screenshots'];
const CASE_KEYS = ['name', 'steps', 'expect_failure'];

// A case: a name, its steps (the first an open), the failure it must end with (if any), and the
// settings of the plan it came from.
function makeCase(c, settings, where) {
  if (!Array.isArray(c.steps) || !c.steps.length) {
    throw new UsageError(`${where}: no steps (a case has a non-empty "steps" array)`);
  }
  if ('expect_failure' in c && (typeof c.expect_failure !== 'string' || !c.expect_failure)) {
    throw new UsageError(`${where}.expect_failure: a non-empty string`);
  }
  const steps = c.steps.map((s, i) => validateStep(s, `${where}: steps[${i}]`));
  if (steps[0].action !== 'open') {
    throw new UsageError(`${where}: steps[0]: the first step must be an open`);
  }
  const base = path.resolve(settings.base);
  return {
    name: c.name,
    steps,
    expect_failure: c.expect_failure,
    base,
    screenshots: path.resolve(base, settings.screenshots ?? '.'),
    page_timeout_ms: nonNegativeInt(settings.page_timeout_ms ?? DEFAULT_PAGE_TIMEOUT_MS,
                                    `${where}: page_timeout_ms`),
    viewport: parseViewport(settings.viewport ?? '1280x900'),
  };
}

// Reads the plan files and the command line into a list of cases.
function loadCases(argv) {
  const planFiles = [];
  const argCases = []; // { name, steps, expect_failure }, from the command line
  let current = null;
  const overrides = {};
  const takes = (i, flag) => {
    if (i + 1 >= argv.length) throw new UsageError(`${flag} needs a value`);
    return argv[i + 1];
  };
  const caseNow = () => {
    if (!current) {
      current = { name: 'arguments', steps: [] };
      argCases.push(current);
    }
    return current;
  };
  const last = (flag) => {
    if (!current || !current.steps.length) {
      throw new UsageError(`${flag} modifies a step: put it after one`);
    }
    return current.steps[current.steps.length - 1];
  };
  const stepFlags = {
    '--open': 'open', '--expect': 'expect', '--click': 'click', '--target': 'target',
    '--images-loaded': 'images_loaded', '--links-resolve': 'links_resolve',
    '--screenshot': 'screenshot', '--hover': 'hover', '--wheel': 'wheel', '--measure': 'measure',
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-h' || a === '--help') {
      const lines = fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1);
      const end = lines.findIndex((l) => !l.startsWith('//'));
      process.stdout.write(lines.slice(0, end).map((l) => l.slice(3)).join('\n') + '\n');
      process.exit(0);
    } else if (a in stepFlags) {
      caseNow().steps.push({ [stepFlags[a]]: takes(i, a) }); i++;
    } else if (a === '--case') {
      current = { name: takes(i, a), steps: [] }; i++;
      argCases.push(current);
    } else if (a === '--expect-failure') {
      const c = caseNow();
      if (c.expect_failure !== undefined) {
        throw new UsageError(`case "${c.name}": --expect-failure given twice`);
      }
      c.expect_failure = takes(i, a); i++;
    } else if (a === '--count' || a === '--max' || a === '--timeout-ms') {
      const key = a.slice(2).replace('-', '_');
      last(a)[key] = Number(takes(i, a)); i++;
    } else if (a === '--within' || a === '--text') {
      last(a)[a.slice(2)] = takes(i, a); i++;
    } else if (a === '--delta-y' || a === '--at-least' || a === '--at-most') {
      last(a)[a.slice(2).replace('-', '_')] = Number(takes(i, a)); i++;
    } else if (['--attribute', '--style', '--less-than', '--save', '--hue'].includes(a)) {
      last(a)[a.slice(2).replace('-', '_')] = takes(i, a); i++;
    } else if (a === '--box-width' || a === '--box-height') {
      last(a).box = a.slice(6);
    } else if (a === '--ctrl' || a === '--shift') {
      last(a)[a.slice(2)] = true;
    } else if (a === '--visible') {
      last(a).visible = true;
    } else if (a === '--fully-visible') {
      last(a).visible = 'fully';
    } else if (a === '--hidden-ok') {
      last(a).visible = false;
    } else if (a === '--no-navigation') {
      last(a).navigates = false;
    } else if (a === '--viewport-only') {
      last(a).full_page = false;
    } else if (a === '--page-timeout-ms') {
      overrides.page_timeout_ms = Number(takes(i, a)); i++;
    } else if (a === '--jobs') {
      overrides.jobs = Number(takes(i, a)); i++;
    } else if (a === '--viewport' || a === '--base' || a === '--screenshots') {
      overrides[a.slice(2)] = takes(i, a); i++;
    } else if (a.startsWith('-')) {
      throw new UsageError(`unknown option ${a} (--help lists them)`);
    } else {
      planFiles.push(a);
    }
  }
  if (overrides.jobs !== undefined && (!Number.isInteger(overrides.jobs) || overrides.jobs < 1)) {
    throw new UsageError('--jobs: expected a positive integer, got ' +
                         `${JSON.stringify(overrides.jobs)}`);
  }
  const jobs = overrides.jobs ?? DEFAULT_JOBS;
  delete overrides.jobs;
  const cases = [];
  for (const planFile of planFiles) {
    let doc;
    try {
      doc = JSON.parse(fs.readFileSync(planFile, 'utf8'));
    } catch (e) {
      throw new UsageError(`plan ${planFile}: ${e.message}`);
    }
    if (!doc || typeof doc !== 'object' || Array.isArray(doc) ||
        Array.isArray(doc.steps) === Array.isArray(doc.cases)) {
      throw new UsageError(`plan ${planFile}: expected an object with a "steps" array or a ` +
                           `"cases" array`);
    }
    for (const key of Object.keys(doc)) {
      if (!PLAN_KEYS.includes(key)) throw new UsageError(`plan ${planFile}: unknown key "${key}"`);
    }
    if (doc.cases && 'expect_failure' in doc) {
      throw new UsageError(`plan ${planFile}: "expect_failure" belongs to a case of "cases"`);
    }
    const dir = path.dirname(path.resolve(planFile));
    const settings = { ...doc, ...overrides };
    settings.base = path.resolve(dir, settings.base ?? '.');
    if (doc.steps) {
      cases.push(makeCase({ ...doc, name: planFile }, settings, planFile));
      continue;
    }
    doc.cases.forEach((c, i) => {
      const where = `${planFile}: cases[${i}]`;
      if (!c || typeof c !== 'object' || Array.isArray(c)) {
        throw new UsageError(`${where}: a case is an object`);
      }
      for (const key of Object.keys(c)) {
        if (!CASE_KEYS.includes(key)) {
          throw new UsageError(`${where}: unknown key "${key}" ` +
                               `(a case has ${CASE_KEYS.join(', ')})`);
        }
      }
      if (typeof c.name !== 'string' || !c.name) {
        throw new UsageError(`${where}: a case has a name`);
      }
      cases.push(makeCase(c, settings, `${where} "${c.name}"`));
    });
  }
  for (const c of argCases) {
    const settings = { ...overrides, base: path.resolve(overrides.base ?? '.') };
    cases.push(makeCase(c, settings, c.name === 'arguments' ? 'arguments' : `case "${c.name}"`));
  }
  if (!cases.length) throw new UsageError('nothing to do: no steps (--help)');
  const seen = new Set();
  for (const c of cases) {
    if (seen.has(c.name)) throw new UsageError(`two cases are named "${c.name}"`);
    seen.add(c.name);
  }
  return { cases, jobs };
}

function resolveUrl(target, base) {
  if (/^(file|https?):/i.test(target)) return target;
  if (target === 'about:blank') return target;
  const file = path.resolve(base, target.replace(/#.*$/, ''));
  const hash = target.includes('#') ? target.slice(target.indexOf('#')) : '';
  if (!fs.existsSync(file)) throw new PageFailure(`cannot open ${file}: no such file`);
  return pathToFileURL(file).href + hash;
}

// ---------------------------------------------------------------------------------------------
// The browser: spawned in a process group of its own, killed and its directory removed on any exit.

let browser = null; // { child, root, cdp, exited, exitStatus, binary, output }

function findChromium() {
  if (process.env.LOCKSIM_CHROMIUM) return process.env.LOCKSIM_CHROMIUM;
  if (fs.existsSync('/usr/lib/chromium/chromium')) return '/usr/lib/chromium/chromium';
  for (const name of ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome']) {
    for (const dir of (process.env.PATH ?? '').split(':')) {
      const p = path.join(dir || '.', name);
      try {
        fs.accessSync(p, fs.constants.X_OK);
        return p;
      } catch { /* next */ }
    }
  }
  throw new BrowserError('no Chromium found (install the Debian package chromium: ' +
                         'apt-get install chromium, or set LOCKSIM_CHROMIUM)');
}

// browserProcessesLeft: the browser's processes not yet gone (zombies aside: they hold nothing):
// those of its process group, and any whose command line names its directory (a helper that left
// the group). Read from /proc.
function browserProcessesLeft(pgid, root) {
  const left = [];
  let entries = [];
  try { entries = fs.readdirSync('/proc'); } catch { return left; }
  for (const name of entries) {
    if (!/^[0-9]+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z' || fields[0] === 'X') continue;
      if (Number(fields[2]) === pgid ||
          fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(root)) {
        left.push(Number(name));
      }
    } catch { /* it ended meanwhile */ }
  }
  return left;
}

// waitForBrowserGoneSync: after the group was killed, waits (synchronously: the process may be
// about to exit) until none of the browser's processes is left, at most `ms`: a killed renderer
// or zygote takes a while to go on a loaded machine, and the harness must not exit before it.
function waitForBrowserGoneSync(pgid, root, ms = 5000) {
  const deadline = Date.now() + ms;
  const tick = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    const left = browserProcessesLeft(pgid, root);
    if (left.length === 0 || Date.now() >= deadline) return left;
    for (const pid of left) {
      try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    }
    Atomics.wait(tick, 0, 0, 20);
  }
}

function killBrowserSync() {
  if (!browser) return;
  if (!browser.exited) {
    try { process.kill(-browser.child.pid, 'SIGKILL'); } catch { /* already gone */ }
  }
  waitForBrowserGoneSync(browser.child.pid, browser.root);
  try {
    fs.rmSync(browser.root, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
  } catch { /* best effort: the process is ending */ }
}

async function closeBrowser() {
  if (!browser) return;
  const { child } = browser;
  if (!browser.exited) {
    // Nothing the browser would save on a clean exit is kept (its directory goes), and asking it
    // to close (Browser.close) takes it a second: the whole group is killed at once, a renderer
    // or zygote outliving the browser process too.
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
    if (!browser.exited) await Promise.race([exited, sleep(2000)]);
  }
  waitForBrowserGoneSync(child.pid, browser.root);
  fs.rmSync(browser.root, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
  browser = null;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// One CDP connection over the pipe: messages are JSON, each ended by a NUL byte.
class Cdp {
  constructor(write, read) {
    this.write = write;
    this.nextId = 1;
    this.pending = new Map();
    this.listeners = new Set();
    this.closed = false;
    this.closeReason = null;
    let chunks = [];
    read.on('data', (chunk) => {
      let start = 0;
      for (let end = chunk.indexOf(0); end !== -1; end = chunk.indexOf(0, start)) {
        chunks.push(chunk.subarray(start, end));
        const text = Buffer.concat(chunks).toString('utf8');
        chunks = [];
        start = end + 1;
        this.dispatch(JSON.parse(text));
      }
      if (start < chunk.length) chunks.push(chunk.subarray(start));
    });
    read.on('close', () => this.close('the browser closed its DevTools pipe'));
    write.on('error', () => this.close('the browser closed its DevTools pipe'));
  }

  dispatch(msg) {
    if (msg.id !== undefined) {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      clearTimeout(p.timer);
      if (msg.error) p.reject(new BrowserError(`${p.method}: ${msg.error.message}`));
      else p.resolve(msg.result);
      return;
    }
    for (const listener of [...this.listeners]) listener(msg);
  }

  close(reason) {
    if (this.closed) return;
    this.closed = true;
    this.closeReason = reason;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new BrowserError(`${p.method}: ${reason}`));
    }
    this.pending.clear();
    for (const listener of [...this.listeners]) listener({ method: '.closed', params: { reason } });
  }

  send(method, params = {}, sessionId = undefined, timeoutMs = 10000) {
    if (this.closed) return Promise.reject(new BrowserError(`${method}: ${this.closeReason}`));
    const id = this.nextId++;
    const msg = { id, method, params };
    if (sessionId) msg.sessionId = sessionId;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new PageFailure(`the browser did not answer ${method} within ${timeoutMs} ms`));
      }, Math.max(1, timeoutMs));
      this.pending.set(id, { resolve, reject, timer, method });
      this.write.write(JSON.stringify(msg) + '\0');
    });
  }

  // Resolves with the first message for which test(msg) is true; rejects after timeoutMs or when
  // the connection closes. test may throw to reject.
  waitFor(test, timeoutMs, what) {
    return new Promise((resolve, reject) => {
      const done = (fn, value) => {
        clearTimeout(timer);
        this.listeners.delete(listener);
        fn(value);
      };
      const listener = (msg) => {
        if (msg.method === '.closed') {
          done(reject, new BrowserError(`while waiting for ${what}: ${msg.params.reason}`));
          return;
        }
        let hit;
        try {
          hit = test(msg);
        } catch (e) {
          done(reject, e);
          return;
        }
        if (hit) done(resolve, msg);
      };
      const timer = setTimeout(
        () => done(reject, new PageFailure(`timed out after ${timeoutMs} ms waiting for ${what}`)),
        Math.max(1, timeoutMs));
      this.listeners.add(listener);
      if (this.closed) listener({ method: '.closed', params: { reason: this.closeReason } });
    });
  }
}

async function launch(viewport) {
  const binary = findChromium();
  // One directory for everything the browser writes: its profile and its temporary files (it
  // leaves org.chromium.Chromium.* in $TMPDIR when killed). Its singleton socket goes in that
  // TMPDIR, .../org.chromium.Chromium.XXXXXX/SingletonSocket, and a socket's path is at most 107
  // bytes: too deep a $TMPDIR, and the browser's directory goes to /tmp.
  let parent = os.tmpdir();
  if (parent.length + '/locksim-browser-XXXXXX/t/org.chromium.Chromium.XXXXXX/SingletonSocket'
    .length > 107) {
    parent = '/tmp';
  }
  const root = fs.mkdtempSync(path.join(parent, 'locksim-browser-'));
  const profile = path.join(root, 'profile');
  fs.mkdirSync(path.join(root, 't'));
  const args = [
    '--headless=new', '--no-sandbox', '--disable-gpu', '--remote-debugging-pipe',
    `--user-data-dir=${profile}`, '--no-first-run', '--no-default-browser-check',
    `--window-size=${viewport.width},${viewport.height}`, '--hide-scrollbars',
    '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--disable-default-apps', '--disable-extensions', '--mute-audio',
    '--disable-crash-reporter', '--disable-breakpad', '--password-store=basic',
    // Cases run side by side in windows of their own: none of them is a background page.
    '--disable-background-timer-throttling', '--disable-renderer-backgrounding',
    '--disable-backgrounding-occluded-windows',
    'about:blank',
  ];
  const child = spawn(binary, args, {
    stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
    detached: true, // its own process group (setsid), killed as a whole
    env: { ...process.env, TZ: 'UTC', TMPDIR: path.join(root, 't') },
  });
  browser = { child, root, exited: false, binary, output: '' };
  const keep = (chunk) => {
    browser && (browser.output = (browser.output + chunk.toString('utf8')).slice(-8000));
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const spawned = new Promise((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (e) => {
      browser.exited = true; // never started
      reject(new BrowserError(`cannot start ${binary}: ${e.message}`));
    });
  });
  child.once('exit', (code, signal) => {
    if (browser && browser.child === child) {
      browser.exited = true;
      browser.exitStatus = signal ? `killed by ${signal}` : `exit ${code}`;
    }
  });
  await spawned;
  const cdp = new Cdp(child.stdio[3], child.stdio[4]);
  browser.cdp = cdp;
  child.once('exit', () => cdp.close(`the browser exited (${browser?.exitStatus ?? 'gone'})`));
  let version;
  try {
    version = await cdp.send('Browser.getVersion', {}, undefined, LAUNCH_TIMEOUT_MS);
  } catch (e) {
    throw new BrowserError(`${binary} did not start: ${e.message}\n` +
                           `its last output:\n${browser?.output ?? ''}`);
  }
  return { cdp, version: version.product, binary };
}

// ---------------------------------------------------------------------------------------------
// The page: one tab, attached with a flat session; everything it reports is watched.

class Page {
  constructor(cdp, sessionId, targetId) {
    this.cdp = cdp;
    this.sessionId = sessionId;
    this.targetId = targetId;
    this.failures = [];
    this.requests = new Map(); // requestId -> url, while loading
    this.mainFrameId = null;
    this.url = 'about:blank';
    this.deadline = Infinity;
    this.listener = (msg) => this.onMessage(msg);
    cdp.listeners.add(this.listener);
  }

  // Stops watching: the page is about to be closed with its case.
  dispose() {
    this.cdp.listeners.delete(this.listener);
  }

  remaining() {
    return Math.max(0, this.deadline - Date.now());
  }

  bounded(ms) {
    const left = this.remaining();
    if (left <= 0) throw new PageFailure('the page\'s time budget is spent');
    return Math.min(ms, left);
  }

  send(method, params = {}, capMs = 10000) {
    return this.cdp.send(method, params, this.sessionId, this.bounded(capMs));
  }

  fail(what) {
    this.failures.push(what);
  }

  onMessage(msg) {
    const p = msg.params ?? {};
    if (msg.method === 'Target.detachedFromTarget' && p.sessionId === this.sessionId) {
      this.fail('the page was closed (detached from its target)');
      return;
    }
    if (msg.sessionId !== this.sessionId) return;
    switch (msg.method) {
      case 'Runtime.exceptionThrown': {
        const d = p.exceptionDetails ?? {};
        const text = d.exception?.description ?? d.exception?.value ?? d.text;
        this.fail(`uncaught exception: ${firstLine(text)}${where(d.url, d.lineNumber)}`);
        break;
      }
      case 'Runtime.consoleAPICalled':
        if (p.type === 'error' || p.type === 'assert') {
          const args = (p.args ?? []).map(remoteText).join(' ');
          const frame = p.stackTrace?.callFrames?.[0];
          this.fail(`console.${p.type}: ${args || '(no message)'}` +
                    `${frame ? where(frame.url, frame.lineNumber) : ''}`);
        }
        break;
      case 'Log.entryAdded':
        if (p.entry?.level === 'error') {
          this.fail(`browser log (${p.entry.source}): ${p.entry.text}` +
                    `${p.entry.url ? ` [${p.entry.url}]` : ''}`);
        }
        break;
      case 'Network.requestWillBeSent':
        this.requests.set(p.requestId, p.request?.url);
        break;
      case 'Network.responseReceived': {
        const r = p.response ?? {};
        if (/^(file|https?):/i.test(r.url ?? '') && r.status >= 400) {
          this.fail(`HTTP ${r.status} for ${r.url}`);
        }
        break;
      }
      case 'Network.loadingFinished':
        this.requests.delete(p.requestId);
        break;
      case 'Network.loadingFailed': {
        const url = this.requests.get(p.requestId) ?? '(unknown URL)';
        this.requests.delete(p.requestId);
        // A load the page itself abandoned (navigating away) is no defect of the page.
        if (!p.canceled) {
          this.fail(`failed to load ${url} (${p.type ?? 'resource'}): ${p.errorText}` +
                    `${p.blockedReason ? `, blocked: ${p.blockedReason}` : ''}`);
        }
        break;
      }
      case 'Page.frameNavigated':
        if (!p.frame?.parentId) {
          this.mainFrameId = p.frame.id;
          this.url = p.frame.url + (p.frame.urlFragment ?? '');
        }
        break;
      case 'Page.navigatedWithinDocument':
        if (p.frameId === this.mainFrameId) this.url = p.url;
        break;
      case 'Page.javascriptDialogOpening':
        this.fail(`a JavaScript ${p.type} dialog: ${p.message}`);
        this.cdp.send('Page.handleJavaScriptDialog', { accept: false }, this.sessionId)
          .catch(() => {});
        break;
      case 'Inspector.targetCrashed':
        this.fail('the page crashed (renderer process died)');
        break;
      default:
        break;
    }
  }

  // Fails the page if anything went wrong so far.
  check() {
    if (this.failures.length) {
      const list = this.failures.map((f) => `  - ${f}`).join('\n');
      throw new PageFailure(`${this.failures.length} failure(s) on the page:\n${list}`);
    }
  }

  // Waits until no request is in flight and then SETTLE_MS more, so that errors reported just
  // after the load are seen.
  async settle() {
    const until = Date.now() + this.bounded(5000);
    let quietSince = null;
    for (;;) {
      if (this.requests.size === 0) {
        quietSince ??= Date.now();
        if (Date.now() - quietSince >= SETTLE_MS) return;
      } else {
        quietSince = null;
      }
      if (Date.now() >= until) {
        throw new PageFailure(`still loading after the load event: ${[...this.requests.values()]
          .join(', ')}`);
      }
      await sleep(25);
    }
  }

  // Runs fn(arg) in the page and returns its (JSON) value.
  async evaluate(fn, arg) {
    const r = await this.send('Runtime.evaluate', {
      expression: `(${fn})(${JSON.stringify(arg ?? null)})`,
      returnByValue: true,
      awaitPromise: false,
    });
    if (r.exceptionDetails) {
      const d = r.exceptionDetails;
      throw new BrowserError(`evaluating in the page: ${d.exception?.description ?? d.text}`);
    }
    return r.result.value;
  }

  async navigate(url) {
    // A URL that differs from the page's only by its #hash would be a jump within the document,
    // not a load: leave the page first.
    const bare = (u) => u.replace(/#.*$/, '');
    if (url !== 'about:blank' && bare(url) === bare(this.url)) await this.navigate('about:blank');
    const loaded = this.cdp.waitFor(
      (m) => m.sessionId === this.sessionId && m.method === 'Page.loadEventFired',
      this.bounded(this.remaining()), `the load event of ${url}`);
    loaded.catch(() => {});
    const r = await this.send('Page.navigate', { url });
    if (r.errorText) throw new PageFailure(`cannot open ${url}: ${r.errorText}`);
    this.mainFrameId = r.frameId;
    await loaded;
    await this.settle();
  }
}

function fragmentOf(hash) {
  try {
    return decodeURIComponent(hash.replace(/^#/, ''));
  } catch {
    return hash.replace(/^#/, '');
  }
}

function firstLine(text) {
  return String(text ?? '').split('\n')[0];
}

function where(url, line) {
  return url ? ` (${url}${line !== undefined ? `:${line + 1}` : ''})` : '';
}

function remoteText(arg) {
  if (arg.type === 'string') return arg.value;
  if ('value' in arg) return JSON.stringify(arg.value);
  return arg.description ?? arg.type;
}

// ---------------------------------------------------------------------------------------------
// In-page helpers (run by Runtime.evaluate; they must be self-contained).

// Describes the elements matching a selector and how much of each the viewport shows.
// With pick, also the point a pointer would be put on: the centre of the visible part of the first
// match that shows (the first match scrolled into view if none does), and what is on top there.
function inPageQuery({ selector, within, text, pick }) {
  const describe = (el) => {
    if (!el) return 'nothing';
    let s = el.tagName.toLowerCase();
    if (el.id) s += `#${el.id}`;
    const cls = el.getAttribute('class');
    if (cls) s += '.' + cls.trim().split(/\s+/).join('.');
    return `<${s}>`;
  };
  // The part of el on screen: its box cut by the viewport and by every ancestor that clips
  // (overflow other than visible, and the outermost <svg>), in CSS pixels.
  const shown = (el) => {
    const rects = [...el.getClientRects()].filter((r) => r.width > 0 && r.height > 0);
    const box = el.getBoundingClientRect();
    const info = {
      box: { x: Math.round(box.x), y: Math.round(box.y), w: Math.round(box.width * 10) / 10,
             h: Math.round(box.height * 10) / 10 },
      viewport: { w: document.documentElement.clientWidth, h: document.documentElement.clientHeight },
      partly: false, fully: false, why: '',
    };
    if (!rects.length) {
      info.why = `has no size (${info.box.w}x${info.box.h} box)`;
      return info;
    }
    if (el.checkVisibility &&
        !el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) {
      info.why = 'is hidden by CSS (display, visibility or opacity)';
      return info;
    }
    let l = box.left; let t = box.top; let r = box.right; let b = box.bottom;
    const clip = (cl, ct, cr, cb) => {
      l = Math.max(l, cl); t = Math.max(t, ct); r = Math.min(r, cr); b = Math.min(b, cb);
    };
    clip(0, 0, info.viewport.w, info.viewport.h);
    let clippedBy = null;
    for (let a = el; a; a = a.parentElement) {
      // An SVG clip-path of one rectangle (a timeline's plot area): what lies outside is not drawn.
      const clipRef = a instanceof SVGElement ? getComputedStyle(a).clipPath : 'none';
      const clipId = /^url\(\s*"?[^"#)]*#([^")]+)"?\s*\)$/.exec(clipRef ?? '')?.[1];
      const clipEl = clipId ? document.getElementById(clipId) : null;
      const clipRect = clipEl?.children.length === 1 && clipEl.children[0] instanceof SVGRectElement &&
                       clipEl.getAttribute('clipPathUnits') !== 'objectBoundingBox'
        ? clipEl.children[0] : null;
      if (clipRect && a.getScreenCTM()) {
        const m = a.getScreenCTM();
        const bb = clipRect.getBBox();
        const p0 = new DOMPoint(bb.x, bb.y).matrixTransform(m);
        const p1 = new DOMPoint(bb.x + bb.width, bb.y + bb.height).matrixTransform(m);
        const before = Math.max(0, r - l) * Math.max(0, b - t);
        clip(Math.min(p0.x, p1.x), Math.min(p0.y, p1.y), Math.max(p0.x, p1.x), Math.max(p0.y, p1.y));
        if (Math.max(0, r - l) * Math.max(0, b - t) < before && !clippedBy) {
          clippedBy = `${describe(a)} (its clip-path #${clipId})`;
        }
      }
      if (a === el) continue;
      const outerSvg = a instanceof SVGSVGElement && !(a.parentElement instanceof SVGElement);
      if (a instanceof SVGElement && !outerSvg) continue;
      const cs = getComputedStyle(a);
      if (cs.overflowX === 'visible' && cs.overflowY === 'visible') continue;
      const ab = a.getBoundingClientRect();
      const before = (r - l) * (b - t);
      if (outerSvg) {
        clip(ab.left, ab.top, ab.right, ab.bottom);
      } else {
        const cl = ab.left + a.clientLeft; const ct = ab.top + a.clientTop;
        clip(cl, ct, cl + a.clientWidth, ct + a.clientHeight);
      }
      if ((r - l) * (b - t) < before && !clippedBy) clippedBy = describe(a);
    }
    const w = r - l; const h = b - t;
    info.seen = { l, t, r, b, w: Math.max(0, w), h: Math.max(0, h) };
    info.partly = w >= 1 && h >= 1;
    info.fully = info.partly && Math.abs(w - box.width) < 0.5 && Math.abs(h - box.height) < 0.5;
    if (!info.partly) {
      info.why = `is outside the viewport (box ${info.box.w}x${info.box.h} at ` +
                 `(${info.box.x},${info.box.y}), viewport ${info.viewport.w}x${info.viewport.h}` +
                 `${clippedBy ? `, clipped by ${clippedBy}` : ''})`;
    } else if (!info.fully) {
      info.why = `is only partly in the viewport (box ${info.box.w}x${info.box.h} at ` +
                 `(${info.box.x},${info.box.y}), viewport ${info.viewport.w}x${info.viewport.h}` +
                 `${clippedBy ? `, clipped by ${clippedBy}` : ''})`;
    }
    return info;
  };
  let root = document;
  if (within) {
    try {
      root = document.querySelector(within);
    } catch (e) {
      return { error: `invalid selector "${within}": ${e.message}` };
    }
    if (!root) return { count: 0, missingRoot: true, items: [] };
  }
  let els;
  try {
    els = [...root.querySelectorAll(selector)];
  } catch (e) {
    return { error: `invalid selector "${selector}": ${e.message}` };
  }
  if (text !== null && text !== undefined) {
    els = els.filter((el) => (el.textContent ?? '').includes(text));
  }
  const items = els.slice(0, 200).map((el) => ({ what: describe(el), ...shown(el) }));
  let point = null;
  if (pick && els.length) {
    let i = items.findIndex((item) => item.partly);
    if (i < 0) {
      i = 0;
      els[0].scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
      items[0] = { what: describe(els[0]), ...shown(els[0]) };
    }
    const item = items[i];
    if (!item.partly) {
      point = { what: item.what, why: item.why };
    } else {
      const x = (item.seen.l + item.seen.r) / 2;
      const y = (item.seen.t + item.seen.b) / 2;
      const hit = document.elementFromPoint(x, y);
      point = { what: item.what, x, y, hit: describe(hit), onTarget: !!hit && els[i].contains(hit) };
    }
  }
  return {
    count: els.length,
    items,
    point,
    url: location.href,
    hash: location.hash,
    target: document.querySelector(':target')?.id ?? null,
  };
}

// Scrolls the first match into view if needed and names the element at the centre of its first
// visible box (what a click there would land on).
function inPageClickPoint({ selector }) {
  const describe = (el) => {
    if (!el) return 'nothing';
    let s = el.tagName.toLowerCase();
    if (el.id) s += `#${el.id}`;
    const cls = el.getAttribute('class');
    if (cls) s += '.' + cls.trim().split(/\s+/).join('.');
    return `<${s}>`;
  };
  let el;
  try {
    el = document.querySelector(selector);
  } catch (e) {
    return { error: `invalid selector "${selector}": ${e.message}` };
  }
  if (!el) return { missing: true };
  const firstBox = () => [...el.getClientRects()].find((r) => r.width >= 1 && r.height >= 1);
  let r = firstBox();
  if (!r) {
    const b = el.getBoundingClientRect();
    return { what: describe(el), why: `has no size (${b.width}x${b.height} box)` };
  }
  const vw = document.documentElement.clientWidth; const vh = document.documentElement.clientHeight;
  if (r.left < 0 || r.top < 0 || r.right > vw || r.bottom > vh) {
    el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    r = firstBox();
  }
  const x = Math.max(0, Math.min(vw - 1, r.left + r.width / 2));
  const y = Math.max(0, Math.min(vh - 1, r.top + r.height / 2));
  const hit = document.elementFromPoint(x, y);
  return { what: describe(el), x, y, hit: describe(hit), onTarget: !!hit && el.contains(hit) };
}

// The first match's attribute or computed style property (null: no such attribute).
function inPageValue({ selector, within, attribute, style }) {
  let root = document;
  if (within) {
    try {
      root = document.querySelector(within);
    } catch (e) {
      return { error: `invalid selector "${within}": ${e.message}` };
    }
    if (!root) return { missingRoot: true };
  }
  let el;
  try {
    el = root.querySelector(selector);
  } catch (e) {
    return { error: `invalid selector "${selector}": ${e.message}` };
  }
  if (!el) return { missing: true };
  let what = el.tagName.toLowerCase();
  if (el.id) what += `#${el.id}`;
  const cls = el.getAttribute('class');
  if (cls) what += '.' + cls.trim().split(/\s+/).join('.');
  const value = attribute !== undefined ? el.getAttribute(attribute)
    : getComputedStyle(el).getPropertyValue(style);
  return { what: `<${what}>`, value };
}

function inPageImages({ selector }) {
  let els;
  try {
    els = [...document.querySelectorAll(selector)];
  } catch (e) {
    return { error: `invalid selector "${selector}": ${e.message}` };
  }
  return els.map((img) => ({
    tag: img.tagName.toLowerCase(),
    src: img.currentSrc || img.getAttribute('src') || '',
    complete: !!img.complete,
    width: img.naturalWidth ?? 0,
    height: img.naturalHeight ?? 0,
  }));
}

function inPageLinks({ selector }) {
  let els;
  try {
    els = [...document.querySelectorAll(selector)];
  } catch (e) {
    return { error: `invalid selector "${selector}": ${e.message}` };
  }
  const here = location.href.replace(/#.*$/, '');
  return els.map((a) => {
    const href = a.getAttribute('href');
    if (href === null) return { raw: null };
    const url = new URL(href, location.href);
    const samePage = url.href.replace(/#.*$/, '') === here;
    const id = url.hash ? decodeURIComponent(url.hash.slice(1)) : '';
    return { raw: href, url: url.href, protocol: url.protocol, samePage, id,
             idFound: id ? !!document.getElementById(id) : null };
  });
}

// ---------------------------------------------------------------------------------------------
// The steps.

function plural(n, word) {
  return `${n} ${word}${n === 1 ? '' : /(ch|sh|s|x)$/.test(word) ? 'es' : 's'}`;
}

async function poll(page, timeoutMs, attempt) {
  const until = Date.now() + page.bounded(timeoutMs);
  for (;;) {
    const result = await attempt();
    if (result.ok || Date.now() >= until) return result;
    await sleep(50);
  }
}

async function stepExpect(page, step) {
  const min = step.count ?? (step.max === 0 ? 0 : 1);
  const visible = step.visible ?? false;
  const timeout = step.timeout_ms ?? DEFAULT_EXPECT_TIMEOUT_MS;
  const what = `"${step.expect}"${step.within ? ` within "${step.within}"` : ''}` +
               `${step.text !== undefined ? ` with text "${step.text}"` : ''}`;
  const r = await poll(page, timeout, async () => {
    const q = await page.evaluate(inPageQuery,
                                  { selector: step.expect, within: step.within, text: step.text });
    if (q.error) throw new UsageError(q.error);
    const shown = q.items.filter((i) => (visible === 'fully' ? i.fully : i.partly));
    const counted = visible ? shown.length : q.count;
    q.ok = !q.missingRoot && counted >= min && (step.max === undefined || q.count <= step.max);
    q.shown = shown.length;
    return q;
  });
  if (r.ok) {
    return `${what}: ${plural(r.count, 'match')}` +
           `${visible ? `, ${r.shown} ${visible === 'fully' ? 'fully ' : ''}in the viewport` : ''}` +
           ` (want >= ${min}${step.max !== undefined ? `, <= ${step.max}` : ''})`;
  }
  if (r.missingRoot) throw new PageFailure(`expect ${what}: nothing matches "${step.within}"`);
  if (step.max !== undefined && r.count > step.max) {
    throw new PageFailure(`expect ${what}: ${plural(r.count, 'match')}, want at most ${step.max}`);
  }
  if (!visible || r.count < min) {
    throw new PageFailure(`expect ${what}: ${plural(r.count, 'match')}, want at least ${min}` +
                          ` (after ${timeout} ms)`);
  }
  const notShown = r.items.find((i) => !(visible === 'fully' ? i.fully : i.partly));
  throw new PageFailure(`expect ${what} ${visible === 'fully' ? 'fully ' : ''}in the viewport: ` +
                        `${plural(r.count, 'match')}, ${r.shown} shown, want at least ${min};` +
                        ` e.g. ${notShown.what} ${notShown.why} (after ${timeout} ms)`);
}

async function stepTarget(page, step) {
  const id = step.target;
  const visible = step.visible ?? true;
  const timeout = step.timeout_ms ?? DEFAULT_EXPECT_TIMEOUT_MS;
  const selector = `[id="${id.replace(/["\\]/g, '\\$&')}"]`;
  const r = await poll(page, timeout, async () => {
    const q = await page.evaluate(inPageQuery, { selector });
    const item = q.items[0];
    q.fragment = fragmentOf(q.hash);
    q.ok = q.fragment === id && q.target === id && q.count === 1 &&
             (!visible || (visible === 'fully' ? item.fully : item.partly));
    q.item = item;
    return q;
  });
  if (r.ok) {
    return `the page jumped to #${id}${visible ? ' and it is in the viewport' : ''}` +
           ` (${r.url})`;
  }
  if (r.fragment !== id) {
    throw new PageFailure(`target #${id}: the URL's fragment is "${r.hash}" (${r.url})`);
  }
  if (r.count === 0) throw new PageFailure(`target #${id}: no element has id "${id}"`);
  if (r.count > 1) throw new PageFailure(`target #${id}: ${r.count} elements have id "${id}"`);
  if (r.target !== id) {
    throw new PageFailure(`target #${id}: :target is ${r.target === null ? 'nothing' : `#${r.target}`}`);
  }
  throw new PageFailure(`target #${id}: ${r.item.what} ${r.item.why}`);
}

async function stepClick(page, step) {
  const navigates = step.navigates ?? true;
  const timeout = step.timeout_ms ?? DEFAULT_CLICK_TIMEOUT_MS;
  const p = await page.evaluate(inPageClickPoint, { selector: step.click });
  if (p.error) throw new UsageError(p.error);
  if (p.missing) throw new PageFailure(`click "${step.click}": nothing matches`);
  if (p.why) throw new PageFailure(`click "${step.click}": ${p.what} ${p.why}, nothing to click`);
  if (!p.onTarget) {
    throw new PageFailure(`click "${step.click}": the centre of ${p.what} (${Math.round(p.x)},` +
                          `${Math.round(p.y)}) is covered by ${p.hit}; a click there misses it`);
  }
  const before = page.url;
  let crossDocument = false;
  const navigated = page.cdp.waitFor((m) => {
    if (m.sessionId !== page.sessionId) return false;
    if (m.method === 'Page.navigatedWithinDocument' && m.params.frameId === page.mainFrameId) {
      return true;
    }
    if (m.method === 'Page.frameNavigated' && !m.params.frame.parentId) crossDocument = true;
    return crossDocument && m.method === 'Page.loadEventFired';
  }, page.bounded(timeout), `a navigation after clicking "${step.click}"`);
  navigated.catch(() => {});
  const mouse = { x: p.x, y: p.y, button: 'left', clickCount: 1 };
  await page.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: p.x, y: p.y });
  await page.send('Input.dispatchMouseEvent', { ...mouse, type: 'mousePressed', buttons: 1 });
  await page.send('Input.dispatchMouseEvent', { ...mouse, type: 'mouseReleased', buttons: 0 });
  if (!navigates) {
    await sleep(Math.min(SETTLE_MS, page.remaining()));
    if (page.url !== before) {
      throw new PageFailure(`click "${step.click}": navigated to ${page.url}, expected to stay`);
    }
    return `clicked ${p.what} at (${Math.round(p.x)},${Math.round(p.y)}), no navigation`;
  }
  try {
    await navigated;
  } catch (e) {
    if (e instanceof PageFailure) {
      throw new PageFailure(`click "${step.click}" on ${p.what} at (${Math.round(p.x)},` +
                            `${Math.round(p.y)}) did not navigate within ${timeout} ms`);
    }
    throw e;
  }
  await page.settle();
  return `clicked ${p.what} at (${Math.round(p.x)},${Math.round(p.y)}) -> ` +
         `${crossDocument ? '' : 'same document, '}${page.url}`;
}

// Where a pointer goes for a hover or a wheel: the centre of the visible part of the first match
// that shows (in the viewport and its clipping ancestors); the match must be on top there.
async function pointerTarget(page, step, action) {
  const selector = step[action];
  const what = `${action} "${selector}"${step.within ? ` within "${step.within}"` : ''}`;
  const r = await poll(page, step.timeout_ms ?? DEFAULT_EXPECT_TIMEOUT_MS, async () => {
    const q = await page.evaluate(inPageQuery, { selector, within: step.within, pick: true });
    if (q.error) throw new UsageError(q.error);
    q.ok = !q.missingRoot && q.count > 0 && q.point && !q.point.why && q.point.onTarget;
    return q;
  });
  if (r.missingRoot) throw new PageFailure(`${what}: nothing matches "${step.within}"`);
  if (!r.count) throw new PageFailure(`${what}: nothing matches`);
  const p = r.point;
  if (p.why) throw new PageFailure(`${what}: ${p.what} ${p.why}`);
  if (!p.onTarget) {
    throw new PageFailure(`${what}: the centre of ${p.what}'s visible part (${Math.round(p.x)},` +
                          `${Math.round(p.y)}) is covered by ${p.hit}; the pointer would miss it`);
  }
  return p;
}

async function stepHover(page, step) {
  const p = await pointerTarget(page, step, 'hover');
  // From a corner, so that the page sees the pointer arrive even if it was there already.
  await page.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: 0, y: 0 });
  await page.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: p.x, y: p.y });
  return `moved the mouse onto ${p.what} at (${Math.round(p.x)},${Math.round(p.y)})`;
}

async function stepWheel(page, step) {
  const p = await pointerTarget(page, step, 'wheel');
  const modifiers = (step.ctrl ? 2 : 0) | (step.shift ? 8 : 0); // CDP: Ctrl 2, Shift 8
  await page.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: p.x, y: p.y, modifiers });
  await page.send('Input.dispatchMouseEvent', {
    type: 'mouseWheel', x: p.x, y: p.y, deltaX: 0, deltaY: step.delta_y, modifiers,
  });
  return `turned the wheel by ${step.delta_y}${step.ctrl ? ' with Ctrl' : ''}` +
         `${step.shift ? ' with Shift' : ''} over ${p.what} at (${Math.round(p.x)},` +
         `${Math.round(p.y)})`;
}

// hueOf: a CSS colour's hue in words: grey (hardly any colour), red, orange, green, or "other".
function hueOf(color) {
  const m = /^rgba?\(([\d.]+)[, ]+([\d.]+)[, ]+([\d.]+)(?:[,/ ]+([\d.]+))?\)$/.exec(color.trim());
  if (!m) return `unreadable`;
  const [r, g, b] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (m[4] !== undefined && Number(m[4]) === 0) return 'transparent';
  const max = Math.max(r, g, b);
  const d = max - Math.min(r, g, b);
  if (d < 16) return 'grey';
  let h = max === r ? 60 * (((g - b) / d) % 6) : max === g ? 60 * ((b - r) / d + 2)
    : 60 * ((r - g) / d + 4);
  if (h < 0) h += 360;
  if (h < 20 || h >= 330) return 'red';
  if (h < 50) return 'orange';
  if (h >= 80 && h < 170) return 'green';
  return `other (hue ${Math.round(h)})`;
}

async function stepMeasure(page, step, saved) {
  const timeout = step.timeout_ms ?? DEFAULT_EXPECT_TIMEOUT_MS;
  const selector = step.measure;
  const reads = step.attribute !== undefined ? `attribute ${step.attribute}`
    : step.style !== undefined ? `style ${step.style}` : `visible ${step.box}`;
  const what = `measure "${selector}"${step.within ? ` within "${step.within}"` : ''} ${reads}`;
  let bound;
  if (step.less_than !== undefined) {
    if (!saved.has(step.less_than)) {
      throw new UsageError(`${what}: less_than "${step.less_than}": nothing saved under that ` +
                           'name by an earlier measure step of the case');
    }
    bound = saved.get(step.less_than);
  }
  const judge = (value) => {
    const problems = [];
    if (value === null) return ['no such attribute'];
    const n = typeof value === 'number' ? value : Number.parseFloat(value);
    const numeric = step.at_least !== undefined || step.at_most !== undefined ||
                    bound !== undefined;
    if (numeric && !Number.isFinite(n)) return [`"${value}" is not a number`];
    if (step.at_least !== undefined && !(n >= step.at_least)) {
      problems.push(`${n} is less than ${step.at_least}`);
    }
    if (step.at_most !== undefined && !(n <= step.at_most)) {
      problems.push(`${n} is more than ${step.at_most}`);
    }
    if (bound !== undefined && !(n < bound)) {
      problems.push(`${n} is not less than "${step.less_than}" (${bound})`);
    }
    if (step.hue !== undefined && hueOf(String(value)) !== step.hue) {
      problems.push(`its hue is ${hueOf(String(value))}, want ${step.hue}`);
    }
    if (step.text !== undefined && !String(value).includes(step.text)) {
      problems.push(`no "${step.text}" in it`);
    }
    return problems;
  };
  const r = await poll(page, timeout, async () => {
    if (step.box !== undefined) {
      const q = await page.evaluate(inPageQuery, { selector, within: step.within });
      if (q.error) throw new UsageError(q.error);
      if (q.missingRoot || !q.count) return { ok: false, missing: true, missingRoot: q.missingRoot };
      const item = q.items[0];
      const value = Math.round(((step.box === 'width' ? item.seen?.w : item.seen?.h) ?? 0) * 10) / 10;
      const problems = judge(value);
      if (problems.length && item.why) problems.push(`${item.what} ${item.why}`);
      return { ok: !problems.length, value, what: item.what, problems };
    }
    const v = await page.evaluate(inPageValue, { selector, within: step.within,
                                                 attribute: step.attribute, style: step.style });
    if (v.error) throw new UsageError(v.error);
    if (v.missing || v.missingRoot) return { ok: false, missing: true, missingRoot: v.missingRoot };
    const problems = judge(v.value);
    return { ok: !problems.length, value: v.value, what: v.what, problems };
  });
  if (r.missing) {
    throw new PageFailure(`${what}: nothing matches "${r.missingRoot ? step.within : selector}"`);
  }
  if (!r.ok) {
    throw new PageFailure(`${what} of ${r.what}: ${JSON.stringify(r.value)}: ` +
                          `${r.problems.join('; ')} (after ${timeout} ms)`);
  }
  if (step.save !== undefined) {
    const n = typeof r.value === 'number' ? r.value : Number.parseFloat(r.value);
    saved.set(step.save, Number.isFinite(n) ? n : r.value);
  }
  const wants = [step.at_least !== undefined ? `>= ${step.at_least}` : '',
                 step.at_most !== undefined ? `<= ${step.at_most}` : '',
                 bound !== undefined ? `< "${step.less_than}" (${bound})` : '',
                 step.hue !== undefined ? `hue ${step.hue}` : '',
                 step.text !== undefined ? `contains "${step.text}"` : ''].filter(Boolean);
  return `${what} of ${r.what}: ${JSON.stringify(r.value)}` +
         `${wants.length ? ` (want ${wants.join(', ')})` : ''}` +
         `${step.save !== undefined ? `, saved as "${step.save}"` : ''}`;
}

async function stepImages(page, step) {
  const r = await poll(page, step.timeout_ms ?? DEFAULT_EXPECT_TIMEOUT_MS, async () => {
    const imgs = await page.evaluate(inPageImages, { selector: step.images_loaded });
    if (imgs.error) throw new UsageError(imgs.error);
    return { imgs, ok: imgs.length > 0 && imgs.every((i) => i.complete && i.width > 0) };
  });
  if (!r.imgs.length) throw new PageFailure(`images_loaded "${step.images_loaded}": no match`);
  const bad = r.imgs.filter((i) => i.tag !== 'img' || !i.complete || i.width === 0);
  if (bad.length) {
    throw new PageFailure(`images_loaded "${step.images_loaded}": ${bad.length} of ` +
                          `${r.imgs.length} not loaded: ` +
                          bad.map((i) => (i.tag !== 'img' ? `a <${i.tag}>` : i.src || '(no src)'))
                            .join(', '));
  }
  return `${plural(r.imgs.length, 'image')} "${step.images_loaded}" loaded (` +
         r.imgs.map((i) => `${i.src.startsWith('data:') ? 'data: URL' : path.basename(i.src)} ` +
                             `${i.width}x${i.height}`).join(', ') + ')';
}

async function stepLinks(page, step) {
  const links = await page.evaluate(inPageLinks, { selector: step.links_resolve });
  if (links.error) throw new UsageError(links.error);
  if (!links.length) throw new PageFailure(`links_resolve "${step.links_resolve}": no match`);
  const bad = [];
  for (const l of links) {
    if (l.raw === null) bad.push('a link without href');
    else if (l.samePage && l.id) { if (!l.idFound) bad.push(`${l.raw} (no element #${l.id})`); }
    else if (l.protocol !== 'file:') bad.push(`${l.raw} (not a local file)`);
    else {
      const file = fileURLToPath(l.url.replace(/[?#].*$/, ''));
      if (!fs.existsSync(file)) bad.push(`${l.raw} (no file ${file})`);
      else if (!fs.statSync(file).isFile()) bad.push(`${l.raw} (${file} is not a file)`);
    }
  }
  if (bad.length) {
    throw new PageFailure(`links_resolve "${step.links_resolve}": ${bad.length} of ` +
                          `${links.length} lead nowhere: ${bad.join(', ')}`);
  }
  return `${plural(links.length, 'link')} "${step.links_resolve}" lead to existing files ` +
         `or elements (${links.map((l) => l.raw).join(', ')})`;
}

async function stepScreenshot(page, step, c) {
  const file = path.resolve(c.screenshots, step.screenshot);
  const full = step.full_page ?? true;
  const params = { format: 'png', fromSurface: true };
  let cut = '';
  if (full) {
    const m = await page.send('Page.getLayoutMetrics');
    const c = m.cssContentSize ?? m.contentSize;
    const width = Math.ceil(c.width);
    const height = Math.min(MAX_SCREENSHOT_HEIGHT, Math.ceil(c.height));
    params.captureBeyondViewport = true;
    params.clip = { x: 0, y: 0, width, height, scale: 1 };
    if (c.height > MAX_SCREENSHOT_HEIGHT) cut = `, cut at ${MAX_SCREENSHOT_HEIGHT} px`;
  }
  const r = await page.cdp.send('Page.captureScreenshot', params, page.sessionId,
                                page.bounded(15000));
  const png = Buffer.from(r.data, 'base64');
  if (png.length < 24 || png.toString('latin1', 1, 4) !== 'PNG') {
    throw new BrowserError('Page.captureScreenshot returned no PNG');
  }
  const size = `${png.readUInt32BE(16)}x${png.readUInt32BE(20)}`;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, png);
  return `screenshot ${file} (${size}, ${full ? 'full page' : 'viewport'}${cut})`;
}

// ---------------------------------------------------------------------------------------------

// One case, in the tab of its lane (a window of its own, made for the lane's first case) with a
// DevTools session of its own: the case starts on about:blank and ends there, its session
// detached, so that nothing of one case (its pages, their scripts, the failures they report)
// reaches the next; a tab in doubt (a case that did not end cleanly) is closed and the lane's next
// case opens a new one. (A window per case costs the browser about twice the CPU of the case.)
// say(line) prints; serially(fn) runs fn when no other case is setting up (a new window starts a
// renderer process, and a burst of them on a loaded machine would starve each other).
async function runCase(cdp, c, say, serially, lane) {
  let page = null;
  const saved = new Map(); // what measure steps saved, by name, for the case's later steps
  let opened = null;
  let label = 'opening a tab';
  try {
    await serially(async () => {
      // Setting up has a budget of its own, as the launch has.
      const until = Date.now() + LAUNCH_TIMEOUT_MS;
      const left = () => Math.max(1, until - Date.now());
      if (lane.targetId === null) {
        ({ targetId: lane.targetId } = await cdp.send('Target.createTarget', {
          url: 'about:blank', newWindow: true, width: c.viewport.width, height: c.viewport.height,
        }, undefined, left()));
      }
      const { sessionId } = await cdp.send('Target.attachToTarget',
                                           { targetId: lane.targetId, flatten: true },
                                           undefined, left());
      page = new Page(cdp, sessionId, lane.targetId);
      page.deadline = until;
      for (const domain of ['Runtime', 'Log', 'Page', 'Network', 'Inspector']) {
        await page.send(`${domain}.enable`, {}, LAUNCH_TIMEOUT_MS);
      }
      // The viewport exactly (a headless window shows less than its size: it keeps room for the
      // browser's own bars).
      await page.send('Emulation.setDeviceMetricsOverride', {
        width: c.viewport.width, height: c.viewport.height, deviceScaleFactor: 1, mobile: false,
      }, LAUNCH_TIMEOUT_MS);
      const tree = await page.send('Page.getFrameTree', {}, LAUNCH_TIMEOUT_MS);
      page.mainFrameId = tree.frameTree.frame.id;
      if (tree.frameTree.frame.url !== 'about:blank') {
        throw new BrowserError(`a reused tab is at ${tree.frameTree.frame.url}, not about:blank`);
      }
    });

    for (const step of c.steps) {
      label = step.action;
      let said;
      if (step.action === 'open') {
        const url = resolveUrl(step.open, c.base);
        page.deadline = Date.now() + (step.timeout_ms ?? c.page_timeout_ms);
        page.failures = [];
        opened = url;
        await page.navigate(url);
        said = `opened ${url}`;
      } else if (step.action === 'expect') {
        said = await stepExpect(page, step);
      } else if (step.action === 'click') {
        said = await stepClick(page, step);
      } else if (step.action === 'target') {
        said = await stepTarget(page, step);
      } else if (step.action === 'images_loaded') {
        said = await stepImages(page, step);
      } else if (step.action === 'links_resolve') {
        said = await stepLinks(page, step);
      } else if (step.action === 'screenshot') {
        said = await stepScreenshot(page, step, c);
      } else if (step.action === 'hover') {
        said = await stepHover(page, step);
      } else if (step.action === 'wheel') {
        said = await stepWheel(page, step);
      } else if (step.action === 'measure') {
        said = await stepMeasure(page, step, saved);
      }
      page.check();
      say(`ok: ${said}`);
    }
    // Errors reported late (a timer, a late image) count too.
    label = 'the end';
    await sleep(Math.min(SETTLE_MS, page.remaining()));
    page.check();
  } catch (e) {
    if (page) {
      if (e instanceof PageFailure && page.failures.length &&
          !/failure\(s\) on the page/.test(e.message)) {
        e.message += `\n${page.failures.length} failure(s) on the page:\n` +
                     page.failures.map((f) => `  - ${f}`).join('\n');
      }
      e.page = page.url !== 'about:blank' ? page.url : opened;
    }
    e.step = label;
    throw e;
  } finally {
    page?.dispose();
    if (!(page && await leaveClean(cdp, page.sessionId)) && lane.targetId !== null) {
      if (!cdp.closed) {
        await cdp.send('Target.closeTarget', { targetId: lane.targetId }, undefined, 10000)
          .catch(() => {});
      }
      lane.targetId = null;
    }
  }
}

// Ends a case in its tab: back to about:blank (the case's documents unloaded, so that nothing they
// say can reach the next case's session), then the session detached. False if that did not work.
async function leaveClean(cdp, sessionId) {
  if (cdp.closed) return false;
  try {
    const loaded = cdp.waitFor((m) => m.sessionId === sessionId &&
                                      m.method === 'Page.loadEventFired', 10000, 'about:blank');
    loaded.catch(() => {});
    const r = await cdp.send('Page.navigate', { url: 'about:blank' }, sessionId, 10000);
    if (r.errorText) return false;
    await loaded;
    await cdp.send('Target.detachFromTarget', { sessionId }, undefined, 10000);
    return true;
  } catch {
    return false;
  }
}

// A failure on one line: the page, the step and what went wrong.
function describeFailure(e) {
  const message = e.message.split('\n').map((l) => l.trim()).filter(Boolean).join(' ');
  return `${e.page ? `page ${e.page}` : 'no page'}: ${e.step ?? 'the browser'}: ${message}`;
}

// Runs every case in one browser, up to `jobs` at a time, each in its own tab; true if each ended
// as expected (passed, or failed saying what its expect_failure says). What a case prints comes
// in the order of the cases, not mixed with another's. A failure of the browser or of the plan
// ends the run at once.
async function run(cases, jobs) {
  const viewports = new Set(cases.map((c) => `${c.viewport.width}x${c.viewport.height}`));
  const { cdp, version, binary } = await launch(cases[0].viewport);
  console.log(`browser: ${version} (${binary}, headless, viewport ${[...viewports].join(', ')})`);
  cdp.listeners.add((msg) => {
    if (msg.method === 'Target.targetCrashed') console.error('browse: a browser target crashed');
  });
  await cdp.send('Target.setDiscoverTargets', { discover: true });
  const n = cases.length;
  const held = cases.map(() => ({ lines: [], done: false }));
  let head = 0; // the first case not done: its lines are printed as they come, others' held
  const say = (i, line) => (i === head ? console.log(line) : held[i].lines.push(line));
  const flush = (i) => {
    for (const line of held[i].lines) console.log(line);
    held[i].lines = [];
  };
  let wrong = 0;
  const verdict = (c, failure) => {
    const want = c.expect_failure;
    if (want === undefined && failure === null) return `ok: case "${c.name}": passed`;
    if (want !== undefined && failure !== null && failure.includes(want)) {
      return `ok: case "${c.name}": failed as expected: ${failure}`;
    }
    wrong++;
    if (want === undefined) return `FAILED: case "${c.name}": ${failure}`;
    if (failure === null) {
      return `FAILED: case "${c.name}": expected to fail saying "${want}", but it passed`;
    }
    return `FAILED: case "${c.name}": expected to fail saying "${want}", but: ${failure}`;
  };
  let opening = Promise.resolve();
  const serially = (fn) => {
    const done = opening.then(fn);
    opening = done.catch(() => {});
    return done;
  };
  let next = 0;
  let aborted = false;
  const worker = async () => {
    const lane = { targetId: null };
    while (next < n && !aborted) {
      const i = next++;
      const c = cases[i];
      if (n > 1) say(i, `--- case ${i + 1}/${n} "${c.name}"`);
      let failure = null;
      try {
        await runCase(cdp, c, (line) => say(i, line), serially, lane);
      } catch (e) {
        if (!(e instanceof PageFailure)) {
          if (aborted) return; // another case's failure ends the run already
          aborted = true;
          e.caseName = c.name;
          for (let j = head; j < n; j++) flush(j);
          throw e;
        }
        failure = describeFailure(e);
      }
      if (aborted) return;
      say(i, verdict(c, failure));
      held[i].done = true;
      while (head < n && held[head].done) {
        head++;
        if (head < n) flush(head);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, n) }, worker));
  if (n > 1) console.log(`cases: ${n}, as expected: ${n - wrong}, not: ${wrong}`);
  await closeBrowser();
  return wrong === 0;
}

function installExitHandlers() {
  const signals = { SIGINT: 2, SIGTERM: 15, SIGHUP: 1 };
  for (const [signal, number] of Object.entries(signals)) {
    process.on(signal, () => {
      process.stderr.write(`browse: interrupted by ${signal}; browser killed\n`);
      killBrowserSync();
      process.exit(128 + number);
    });
  }
  process.on('exit', killBrowserSync);
  const internal = (e) => {
    process.stderr.write(`browse: internal error: ${e?.stack ?? e}\n`);
    killBrowserSync();
    process.exit(EXIT_BROWSER);
  };
  process.on('uncaughtException', internal);
  process.on('unhandledRejection', internal);
}

async function main() {
  installExitHandlers();
  let cases;
  let jobs;
  try {
    ({ cases, jobs } = loadCases(process.argv.slice(2)));
  } catch (e) {
    process.stderr.write(`browse: ${e.message}\n`);
    process.exit(EXIT_USAGE);
  }
  // A hard bound over everything, in case a wait escaped its own: the launch, and per case the
  // opening and closing of its tab and each page's budget.
  const budget = cases.reduce((sum, c) => sum + 2 * LAUNCH_TIMEOUT_MS +
    c.steps.filter((s) => s.action === 'open').length * c.page_timeout_ms, LAUNCH_TIMEOUT_MS);
  const guard = setTimeout(() => {
    process.stderr.write('browse: FAILED: the overall time limit passed\n');
    killBrowserSync();
    process.exit(EXIT_PAGE);
  }, budget + 10000);
  try {
    const allAsExpected = await run(cases, jobs);
    clearTimeout(guard);
    process.exitCode = allAsExpected ? 0 : EXIT_PAGE;
  } catch (e) {
    clearTimeout(guard);
    const where = e.caseName !== undefined ? `case "${e.caseName}": ` : '';
    if (e instanceof UsageError) {
      process.stderr.write(`browse: ${where}${e.message}\n`);
      process.exitCode = EXIT_USAGE;
    } else {
      process.stderr.write(`FAILED: ${where}${e.page ? `page ${e.page}: ` : ''}` +
                           `${e.step ?? 'the browser'}: ${e.message}\n`);
      if (browser?.output && !(e instanceof BrowserError && /did not start/.test(e.message))) {
        process.stderr.write(`the browser's last output:\n${browser.output}\n`);
      }
      process.exitCode = EXIT_BROWSER;
    }
    await closeBrowser().catch(() => {});
  }
  process.exit(process.exitCode);
}

main();
