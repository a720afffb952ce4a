#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Unit test of benchlib's statistics: the median's confidence interval
and the settled/not-settled verdicts RESULTS.md prints, and the pooling
of several affinity-matrix results dirs they may rest on. No root needed."""
import math
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from benchlib import ci_text, median_ci, target, target_line, verdict  # noqa: E402


def load_bench(name):
    """A bench script (no .py) as a module, for its pure functions."""
    import importlib.machinery
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.realpath(__file__)), '..', name)
    loader = importlib.machinery.SourceFileLoader(name.replace('-', '_'), path)
    mod = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(mod)
    return mod


class MedianCi(unittest.TestCase):
    def test_order_statistics(self):
        # n=12: x(3)..x(10), coverage 1 - 2*(1+12+66)/4096
        ci = median_ci([float(x) for x in range(12, 0, -1)])
        self.assertEqual((ci['low'], ci['high'], ci['n']), (3.0, 10.0, 12))
        self.assertAlmostEqual(ci['coverage'], 1 - 2 * 79 / 4096)
        # n=36: x(12)..x(25) is the narrowest with >= 95%
        ci = median_ci(list(range(1, 37)))
        self.assertEqual((ci['low'], ci['high']), (12, 25))
        self.assertGreaterEqual(ci['coverage'], 0.95)
        narrower = 1 - 2 * sum(math.comb(36, i) for i in range(13)) / 2 ** 36  # x(13)..x(24)
        self.assertLess(narrower, 0.95)

    def test_few_values_give_the_range(self):
        ci = median_ci([5, 1, 3, 2, 4])
        self.assertEqual((ci['low'], ci['high']), (1, 5))
        self.assertAlmostEqual(ci['coverage'], 1 - 2 / 32)
        ci = median_ci([7, None])
        self.assertEqual((ci['low'], ci['high'], ci['coverage'], ci['n']), (7, 7, 0.0, 1))
        self.assertIsNone(median_ci([]))
        self.assertIsNone(median_ci([None]))

    def test_coverage_holds(self):
        # the interval holds the true median at least as often as it says
        rng, n, hits, trials = random.Random(1), 12, 0, 4000
        for _ in range(trials):
            ci = median_ci([rng.expovariate(1.0) for _ in range(n)])
            hits += ci['low'] <= math.log(2) <= ci['high']
        self.assertGreater(hits / trials, 0.94)


class Verdicts(unittest.TestCase):
    def test_settled_both_ways(self):
        t = target('x', 1.02, [1.00, 1.01, 1.02, 1.03, 1.04], 0.99)
        self.assertEqual((t['met'], t['settled']), (True, True))
        self.assertEqual(verdict(t['met'], t['settled']), 'met')
        t = target('x', 0.90, [0.88, 0.89, 0.90, 0.91, 0.92], 0.97)
        self.assertEqual((t['met'], t['settled']), (False, True))
        self.assertEqual(verdict(t['met'], t['settled']), 'NOT met')

    def test_straddling_is_not_settled(self):
        t = target('x', 0.986, [0.91, 0.95, 0.986, 1.05, 1.14], 0.99)
        self.assertEqual((t['met'], t['settled']), (False, False))
        self.assertEqual(verdict(t['met'], t['settled']), 'NOT met (not settled)')
        self.assertIn('both sides of 0.99', target_line(t))

    def test_lower_is_better(self):
        t = target('ns', 87.0, [80, 85, 87, 90, 99], 100, higher=False)
        self.assertEqual((t['met'], t['settled']), (True, True))
        t = target('ns', 98.0, [90, 95, 98, 101, 103], 100, higher=False)
        self.assertEqual((t['met'], t['settled']), (True, False))
        self.assertEqual(verdict(t['met'], t['settled']), 'met (not settled)')

    def test_too_few_rounds_settle_nothing(self):
        # 4 values on one side: their range covers 87.5% only
        t = target('x', 1.02, [1.00, 1.01, 1.03, 1.04], 0.99)
        self.assertEqual((t['met'], t['settled']), (True, False))
        self.assertIn('Only 4 rounds', target_line(t))
        self.assertNotIn('both sides', target_line(t))
        t = target('x', 1.02, [1.02], 0.99)  # one value: 0%
        self.assertEqual((t['met'], t['settled']), (True, False))

    def test_no_samples(self):
        t = target('x', 1.0, [], 0.97)
        self.assertIsNone(t['settled'])
        self.assertEqual(verdict(t['met'], t['settled']), 'met')


class MatrixRatio(unittest.TestCase):
    """The matrix's target is read on the median of the per-repetition
    ratios, the statistic its interval is of: never on the ratio of two
    medians, which failed runs or skew can put on the other side."""

    def test_failed_runs_do_not_flip_it(self):
        ratio = load_bench('affinity-matrix')._ratio
        # caad's 5 repetitions, the baseline's 3 of them failed: both pairs below 1
        r = ratio({0: 9, 1: 9, 2: 20, 3: 20, 4: 20}, {0: 10, 1: 10})
        self.assertAlmostEqual(r['median_ratio'], 0.9)
        self.assertEqual(r['pairs'], 2)
        self.assertAlmostEqual(r['ratio_of_medians'], 2.0)
        t = target('x', r['median_ratio'], r['per_repetition'], 1.0)
        self.assertFalse(t['met'])
        self.assertIsNone(ratio({0: 1}, {1: 1})['median_ratio'])  # no repetition ran both

    def test_value_inside_its_interval(self):
        ratio, rng = load_bench('affinity-matrix')._ratio, random.Random(7)
        for _ in range(300):
            n = rng.randint(2, 12)
            r = ratio({i: rng.uniform(5, 30) for i in range(n)}, {i: rng.uniform(5, 30) for i in range(n)})
            ci = median_ci(r['per_repetition'])
            self.assertLessEqual(ci['low'], r['median_ratio'])
            self.assertLessEqual(r['median_ratio'], ci['high'])

    def test_coverage_rounded_down(self):
        self.assertIn('(93.7%, n=5)', ci_text(target('x', 1, [1, 2, 3, 4, 5], 1), 3))


class Pool(unittest.TestCase):
    """bench/affinity-matrix --pool: the runs of several results dirs as one."""

    def setUp(self):
        import tempfile
        self.am = load_bench('affinity-matrix')
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def source(self, name, date, seed, goodput, steal=0.5, wall=600.0, **meta):
        import json
        d = os.path.join(self.tmp.name, name)
        os.makedirs(d)
        m = {'bench': 'affinity-matrix', 'testbed_kind': 'veth', 'app_cpus': [0, 1], 'proc_cpus': [0, 1],
             'configs': ['static', 'default'], 'managed_apps': [0, 1, 'unpinned'], 'duration': 10, 'omit': 2,
             'sender_cpu': 'unpinned', 'caad_config': 'Interfaces=vb', 'trials': "caad's defaults", 'quick': False,
             'reps': len(goodput), 'seed': seed, 'wall_s': wall, 'steal': {'steal_pct': steal, 'busy_pct': 70.0},
             'machine': {'cpu_model': 'X', 'nproc': 2, 'online_cpus': '0-1', 'kernel': 'k', 'hostname': 'h',
                         'date_utc': date, 'source': f'commit {name}'}}
        m.update(meta)
        runs, n = [], 0
        for rep, g in enumerate(goodput):
            for cfg in ('static', 'default'):
                n += 1
                runs.append({'run': n, 'rep': rep, 'config': cfg, 'proc_cpu': 0 if cfg == 'static' else None,
                             'app_cpu': 0, 'status': 'ok', 'goodput_bps': g, 'steal_pct': steal})
        runs.append({'config': 'rfs', 'app_cpu': 0, 'proc_cpu': None, 'status': 'not available in this build'})
        with open(os.path.join(d, 'runs.json'), 'w') as f:
            json.dump({'meta': m, 'runs': runs}, f)
        return d

    def pooled(self, *dirs):
        import json
        out = os.path.join(self.tmp.name, 'out')
        os.makedirs(out, exist_ok=True)
        self.am.pool(list(dirs), out)
        with open(os.path.join(out, 'runs.json')) as f:
            return json.load(f)

    def test_repetitions_numbered_on(self):
        a = self.source('a', 'd1', 7, [1e9, 2e9, 3e9], steal=1.0, wall=300.0)
        b = self.source('b', 'd2', 8, [4e9, 5e9], steal=4.0, wall=600.0)
        data = self.pooled(a, b)
        runs, meta = data['runs'], data['meta']
        reps = [r['rep'] for r in runs if 'rep' in r]
        self.assertEqual(sorted(set(reps)), [0, 1, 2, 3, 4])
        # a repetition pairs runs of one source only: b's first is rep 3
        self.assertEqual({r['goodput_bps'] for r in runs if r.get('rep') == 3}, {4e9})
        self.assertEqual(sorted(r['run'] for r in runs if 'run' in r), list(range(1, 11)))
        self.assertEqual(meta['reps'], 5)
        self.assertEqual(meta['wall_s'], 900.0)
        self.assertAlmostEqual(meta['steal']['steal_pct'], 3.0)  # weighted by minutes
        self.assertEqual([p['seed'] for p in meta['pooled']], [7, 8])
        self.assertEqual([p['source'] for p in meta['pooled']], ['commit a', 'commit b'])
        # the configuration this build could not run: said once, not per source
        self.assertEqual(len([r for r in runs if r['config'] == 'rfs']), 1)

    def test_different_benches_do_not_pool(self):
        a = self.source('a', 'd1', 7, [1e9])
        b = self.source('b', 'd2', 8, [2e9], duration=20)
        with self.assertRaises(SystemExit):
            self.pooled(a, b)
        c = self.source('c', 'd3', 9, [2e9], machine={'cpu_model': 'X', 'nproc': 16, 'online_cpus': '0-15',
                                                      'kernel': 'k', 'hostname': 'h', 'date_utc': 'd3'})
        with self.assertRaises(SystemExit):
            self.pooled(a, c)

    def test_the_same_runs_pool_once(self):
        a = self.source('a', 'd1', 7, [1e9])
        with self.assertRaises(SystemExit):
            self.pooled(a, a)
        # nor a pooled dir again (its sources' own dates are inside it)
        b = self.source('b', 'd2', 8, [2e9])
        self.pooled(a, b)
        other = os.path.join(self.tmp.name, 'other')
        os.makedirs(other)
        with self.assertRaises(SystemExit):
            self.am.pool([os.path.join(self.tmp.name, 'out'), b], other)
        # nor into one of its sources
        with self.assertRaises(SystemExit):
            self.am.pool([a, b], a)

    def test_builds_that_ran_other_placements_do_not_pool(self):
        a = self.source('a', 'd1', 7, [1e9], placement={'prior': {'accepted': True}, 'measure': {'accepted': True}})
        b = self.source('b', 'd2', 8, [2e9], placement={'prior': {'accepted': True}, 'measure': {'accepted': False}})
        with self.assertRaises(SystemExit):
            self.pooled(a, b)

    def test_copied_verdicts_are_not_called_trained(self):
        tr = {'app_cpu': 0, 'seconds': 5, 'limit_s': 60, 'verdicts': None, 'trials': 'd'}
        a = self.source('a', 'd1', 7, [1e9], state_from='run-x', measure_training=tr)
        b = self.source('b', 'd2', 8, [2e9], measure_training=tr)
        meta = self.pooled(a, b)['meta']
        texts = [self.am.measure_text(dict(meta, **p['training'])) for p in meta['pooled']]
        self.assertIn('copied', texts[0])
        self.assertIn('`run-x`', texts[0])
        self.assertNotIn('copied', texts[1])
        self.assertIn('before the measured runs', texts[1])

    def test_bad_runs(self):
        import json
        a = self.source('a', 'd1', 7, [1e9])
        b = self.source('b', 'd2', 8, [2e9])
        with open(os.path.join(b, 'runs.json')) as f:
            data = json.load(f)
        data['runs'].append('not a run')
        with open(os.path.join(b, 'runs.json'), 'w') as f:
            json.dump(data, f)
        with self.assertRaises(SystemExit):
            self.pooled(a, b)



class ObserverReport(unittest.TestCase):
    """bench/observer's words on kernel.bpf_stats_enabled as it found it."""

    def test_off_is_not_called_on(self):
        ob = load_bench('observer')
        for off in ('0', 0, '0\n', ''):
            line = ob.bpf_stats_line(off)
            self.assertNotIn('(on)', line)
            self.assertIn('for the statistics streams only', line)

    def test_kinds_of_one_size_are_told_apart(self):
        ob = load_bench('observer')
        prog = {'caad_sock_recv_length': {'median_ns_per_event': 80.0, 'ns_per_event_rounds': [80.0] * 5}}
        churns = {k: {'connections': 3000, 'bytes': 100, 'progs': prog} for k in ('short', 'old')}
        names = [t['what'] for t in ob.churn_targets('x', 'caad_sock_recv_length', churns)]
        self.assertEqual(len(names), 2)
        self.assertEqual(len(set(names)), 2)
        self.assertIn('not followed', names[0])
        self.assertIn('first read', names[1])
        self.assertEqual(ob.churn_targets('x', 'caad_sk_data_ready', churns), [])

    def test_on_is_called_on(self):
        ob = load_bench('observer')
        for on in ('1', 1, 'garbage'):
            self.assertIn('(on) before the bench', ob.bpf_stats_line(on))



class MemoryReport(unittest.TestCase):
    """bench/memory's summary from raw levels: what was not read is not shown as measured."""

    def setUp(self):
        import tempfile
        self.mem = load_bench('memory')
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def analyze(self, levels, confs=None):
        import json
        d = self.tmp.name
        meta = {'maxflows_factor': 2, 'wall_s': 60.0, 'steal': {'steal_pct': 0.0}}
        with open(os.path.join(d, 'levels.json'), 'w') as f:
            json.dump({'meta': meta, 'levels': levels}, f)
        for n, text in (confs or {}).items():
            os.makedirs(os.path.join(d, f'flows-{n}'), exist_ok=True)
            with open(os.path.join(d, f'flows-{n}', 'caad.conf'), 'w') as f:
                f.write(text)
        s = self.mem.analyze(d)
        with open(os.path.join(d, 'summary.md')) as f:
            return s, f.read()

    def test_failed_level_is_not_zeros(self):
        ok = {'flows': 1000, 'max_flows': 2000, 'status': 'ok', 'flows_listed': 1000, 'idle_rss_kib': 6000,
              'rss_kib': 6500, 'hwm_kib': 16000, 'maps_bytes': 600000, 'flow_map_bytes': 0,
              'state_json_bytes': 1000, 'caad_cpu_pct': 0.5}
        bad = {'flows': 100000, 'max_flows': None, 'status': 'failed: no memory'}
        s, md = self.analyze([ok, bad], {1000: '[Daemon]\nMinFlowBytes=0\n'})
        row = [ln for ln in md.splitlines() if ln.startswith('| 100000 |')][0]
        header = [ln for ln in md.splitlines() if ln.startswith('| flows |')][0]
        self.assertNotIn('0.0', row)
        self.assertIn('n/a -> n/a', row)
        self.assertEqual(row.count('|'), header.count('|'))
        self.assertTrue(row.rstrip(' |').endswith('failed: no memory'))
        self.assertIn('failed: no memory: NOT measured', md)
        self.assertEqual([t.get('status') for t in s['targets']], ['failed: no memory'])
        self.assertIn('MinFlowBytes=0', md)

    def test_no_100k_level_is_a_target_not_measured(self):
        lv = {'flows': 1000, 'max_flows': 2000, 'status': 'ok', 'rss_kib': 6500, 'hwm_kib': 16000}
        s, md = self.analyze([lv], {1000: 'Interfaces=vb\nMaxFlows=2000\n'})
        self.assertEqual(len(s['targets']), 1)
        self.assertNotIn('value', s['targets'][0])
        self.assertIn('no 100000 level in this run: NOT measured', md)
        # a caad from before MinFlowBytes= set none: not said to be 0
        self.assertNotIn('MinFlowBytes=0', md)
        self.assertIn('before it', md)




class MatrixNotes(unittest.TestCase):
    """bench/affinity-matrix: "not settled" explained by its cause."""

    def test_too_few_is_not_called_straddling(self):
        am = load_bench('affinity-matrix')
        few = target('x', 0.52, [0.50, 0.52, 0.55], 0.97)
        self.assertFalse(few['settled'])
        notes = am.not_settled_notes([few])
        self.assertEqual(len(notes), 1)
        self.assertNotIn('both sides', notes[0])
        self.assertIn('fewer than 5', notes[0])
        wide = target('y', 1.0, [0.8, 0.9, 1.0, 1.1, 1.2, 1.0, 0.95, 1.05, 0.9, 1.1], 0.97)
        self.assertFalse(wide['settled'])
        self.assertFalse(wide['too_few'])
        self.assertIn('both sides', ' '.join(am.not_settled_notes([wide])))
        self.assertEqual(len(am.not_settled_notes([few, wide])), 2)
        self.assertEqual(am.not_settled_notes([target('z', 1.0, [1.0] * 9, 0.97)]), [])

class RunAllReport(unittest.TestCase):
    """bench/run-all's RESULTS.md: facts of the run from its results, figures named for what they are."""

    def setUp(self):
        import tempfile
        self.ra = load_bench('run-all')
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def bench(self, d, source, stats=None, **meta):
        import json
        os.makedirs(os.path.join(self.tmp.name, d))
        mach = {'cpu_model': 'X', 'nproc': 2, 'online_cpus': '0-1', 'kernel': 'k', 'date_utc': 'd',
                'loadavg_at_start': '0.1 0.1 0.1', 'source': source, 'bpf_stats_enabled': stats}
        with open(os.path.join(self.tmp.name, d, 'summary.json'), 'w') as f:
            json.dump({'meta': dict({'machine': mach, 'caad': '/x/caad', 'caad_version': 'caad 0'}, **meta),
                       'targets': []}, f)
        return (d, d, [], 0, 60.0)

    def render(self, runs, machine=None):
        path = os.path.join(self.tmp.name, 'R.md')
        self.ra.render(self.tmp.name, path, runs, False, machine=machine)
        with open(path) as f:
            return f.read()

    def test_sources_that_differ_are_each_said(self):
        md = self.render([self.bench('a', 'commit 1'), self.bench('b', 'commit 1 with uncommitted changes')])
        self.assertIn('| source | a: commit 1; b: commit 1 with uncommitted changes |', md)
        md = self.render([self.bench('c', 'commit 2'), self.bench('e', 'commit 2')])
        self.assertIn('| source | commit 2 |', md)

    def test_a_later_bench_with_stats_on_is_warned_of(self):
        md = self.render([self.bench('a', 's', stats=0), self.bench('observer', 's', stats=0, bpf_stats_orig='1')])
        self.assertIn('**kernel.bpf_stats_enabled was on (observer (before its streams))', md)
        md2 = self.render([self.bench('b', 's', stats=0), self.bench('c', 's', stats=1)])
        self.assertIn('was on (c)', md2)

    def test_off_everywhere_is_not_warned_of(self):
        md = self.render([self.bench('a', 's', stats=0), self.bench('observer', 's', stats=0, bpf_stats_orig='0')])
        self.assertNotIn('was on', md)

    def test_no_results_take_nothing_from_the_rendering_machine(self):
        md = self.render([('x', 'x', [], 1, 1.0)])
        self.assertIn('| kernel | not recorded |', md)
        self.assertNotIn(os.uname().release, md)

    def test_run_alls_own_machine_is_the_header(self):
        m = {'cpu_model': 'Y', 'nproc': 4, 'online_cpus': '0-3', 'kernel': 'kk', 'date_utc': 'dd',
             'loadavg_at_start': '0 0 0', 'source': 's', 'bpf_stats_enabled': 1}
        md = self.render([self.bench('a', 's', stats=0)], machine=m)
        self.assertIn('| kernel | kk |', md)
        self.assertIn('was on (run-all)', md)

    def test_a_p99_is_not_called_a_median(self):
        row = self.ra.target_row({'what': 'reaction', 'value': 50.0, 'statistic': 'p99', 'min': 1.0, 'max': 5000.0,
                                  'met': True})
        self.assertIn('| 50.0 (p99) | 1.0 - 5000.0 |', row)
        row = self.ra.target_row({'what': 'memory', 'value': 26.4, 'statistic': 'peak', 'min': None, 'max': None,
                                  'met': True})
        self.assertIn('| 26.4 (peak) |  |', row)
        row = self.ra.target_row({'what': 'x', 'value': 0.95, 'min': 0.9, 'max': 1.0, 'met': False,
                                  'settled': True})
        self.assertIn('| 0.950 | 0.900 - 1.000 |', row)


class ReactionReport(unittest.TestCase):
    def test_missed_moves_are_in_the_count_and_range(self):
        import json
        import tempfile
        rc = load_bench('reaction')
        with tempfile.TemporaryDirectory() as d:
            moves = [{'needed_change': True, 'reaction_ms': 3.0 + i, 'migrated_ms': 1.0} for i in range(58)]
            moves += [{'needed_change': True, 'reaction_ms': None} for _ in range(2)]
            meta = {'timeout': 5, 'cpus': '0-1', 'gap': 1, 'jitter': 0, 'caad_config': 'x', 'wall_s': 60.0,
                    'steal': {'steal_pct': 0.0}}
            with open(os.path.join(d, 'moves.json'), 'w') as f:
                json.dump({'meta': meta, 'moves': moves, 'baseline': []}, f)
            s = rc.analyze(d)
            with open(os.path.join(d, 'summary.md')) as f:
                md = f.read()
        t = s['targets'][0]
        self.assertEqual(t['statistic'], 'p99')
        self.assertLessEqual(t['min'], t['value'])
        self.assertGreaterEqual(t['max'], t['value'])
        self.assertIn('over 60 moves (58 timed, 2 not followed)', md)


if __name__ == '__main__':
    unittest.main()
