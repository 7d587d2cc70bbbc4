//! How often the summary's intervals cover the true mean, over histories drawn from a
//! population made by the main job's generator: the population's mean of a group is the true
//! mean, and each repetition draws a sample of histories from it (with replacement, so the
//! histories of a sample are independent and the population mean is exactly what they
//! estimate), sums them as a sweep does and asks its interval.
//!
//! The case these exist for: measures that count an infeasible cell as 0, in groups whose
//! feasible share is 0.95–0.999. A sample of 30 histories mostly draws no failing history, and
//! the interval from the histories' spread alone then sits above the true mean.

use crate::common::*;
use ctxlab::cells::{evaluate_history, CellRow, CellScratch, Grid};
use ctxlab::history::source::HistorySource;
use ctxlab::stats::{Acc, Partial};
use ctxlab::sweep::SweepExperiment;

/// The histories of a population, each summed per group and measure as a sweep sums them.
struct Population {
    /// The measures followed, with an empty accumulator of each (its kind of interval).
    measures: Vec<(String, Acc)>,
    /// Each group's strategy, keep_recent, budget and noise level.
    labels: Vec<String>,
    /// Per history, the partial sums of every group × measure (group-major).
    partials: Vec<Vec<Partial>>,
}

/// A seedable generator (SplitMix64) for drawing samples.
struct Draw(u64);
impl Draw {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((u128::from(z ^ (z >> 31)) * n as u128) >> 64) as usize
    }
}

impl Population {
    /// `experiments/noise.toml` with `overrides` (its generator, seeds and grid; the count of
    /// histories among them), following the measures `keep` accepts.
    fn generate(overrides: &[&str], keep: impl Fn(&str) -> bool) -> Population {
        let path = root().join("experiments/noise.toml");
        let text = std::fs::read_to_string(&path).unwrap();
        let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
        let exp = ctxlab::experiment::parse("noise.toml", &text, &overrides).unwrap();
        let flags = SweepExperiment::flags_file(&exp);
        let source = HistorySource::open(SweepExperiment::source(&exp), flags).unwrap();
        let grid = Grid::new(&exp, source.len());
        let table = ctxlab::tables::cells::table();
        let columns: Vec<_> = table
            .measures()
            .filter(|c| keep(c.summary_name()))
            .collect();
        let measures: Vec<(String, Acc)> = columns
            .iter()
            .map(|c| {
                let mut acc = Acc::new(c.whole());
                acc.unit = c.unit();
                acc.zero_fails = c.zero_fails && acc.unit;
                (c.summary_name().to_string(), acc)
            })
            .collect();
        let m = measures.len();
        let groups = grid.groups();
        let sum = |i: usize, h: &ctxlab::CostedHistory, scratch: &mut CellScratch| {
            let mut rows: Vec<CellRow> = Vec::new();
            evaluate_history(&grid, i, h, scratch, &mut rows);
            let mut partials = vec![Partial::default(); groups * m];
            let mut x = Vec::new();
            for r in &rows {
                let g = grid.group(
                    r.strategy as usize,
                    r.keep_recent_axis as usize,
                    r.budget as usize,
                    r.level as usize,
                );
                for (j, c) in columns.iter().enumerate() {
                    x.clear();
                    c.numbers(&grid, std::slice::from_ref(r), &mut x);
                    if let Some(x) = x[0] {
                        partials[g * m + j].push(measures[j].1.quantise(x));
                    }
                }
            }
            partials
        };
        let partials = source
            .evaluate(0..source.len(), SweepExperiment::cost(&exp), sum)
            .expect("the generated histories need no file")
            .into_iter()
            .map(|(_, p)| p)
            .collect();
        let labels = (0..groups)
            .map(|g| {
                let (s, k, b, l) = grid.group_coordinates(g);
                format!(
                    "{} keep_recent={} budget={} {}",
                    grid.labels[s],
                    grid.keep_recent.of(s, k),
                    grid.budgets[b],
                    grid.noise_labels[l]
                )
            })
            .collect();
        Population {
            measures,
            labels,
            partials,
        }
    }

    fn group_measure(&self, k: usize, histories: impl Iterator<Item = usize>) -> Acc {
        let mut acc = self.measures[k % self.measures.len()].1;
        for h in histories {
            acc.add_history(&self.partials[h][k]);
        }
        acc
    }

    /// The true mean of every group × measure: its mean over the whole population.
    fn truth(&self) -> Vec<Option<f64>> {
        (0..self.partials[0].len())
            .map(|k| self.group_measure(k, 0..self.partials.len()).mean())
            .collect()
    }

    /// Over `repetitions` samples of `histories` histories (seeded by `seed`), how many of
    /// each group × measure's intervals cover its true mean, with the failure rule (`now`) and
    /// without it (`before`, the interval before it), and in how many the interval exists.
    fn coverage(&self, histories: usize, repetitions: usize, seed: u64) -> Vec<Covered> {
        use rayon::prelude::*;
        let truth = self.truth();
        let mut draw = Draw(seed);
        let samples: Vec<Vec<usize>> = (0..repetitions)
            .map(|_| {
                (0..histories)
                    .map(|_| draw.below(self.partials.len()))
                    .collect()
            })
            .collect();
        (0..truth.len())
            .into_par_iter()
            .map(|k| {
                let mut c = Covered::default();
                for sample in &samples {
                    let acc = self.group_measure(k, sample.iter().copied());
                    let (Some(t), Some(now)) = (truth[k], acc.interval()) else {
                        continue;
                    };
                    let covers = |(lo, hi): (f64, f64)| usize::from(lo <= t && t <= hi);
                    c.now += covers(now);
                    c.before += if acc.zero_fails {
                        let mut before = acc;
                        before.zero_fails = false;
                        covers(before.interval().unwrap())
                    } else {
                        covers(now)
                    };
                    c.defined += 1;
                }
                c
            })
            .collect()
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Covered {
    now: usize,
    before: usize,
    defined: usize,
}

/// The measures that count an infeasible cell as 0, the ones the failure rule is for.
const MEASURES: [&str; 5] = [
    "required_retention_all",
    "retention_any_all",
    "fact_retention_all",
    "needed_fact_retention_all",
    "feasible",
];

/// 12 groups of `required` (keep_recent 0 and 3, budgets 60–80 %, fn 0 and 0.1 at fp 0.05),
/// whose feasible shares are 0.97–0.999, over a population of 2000 generated histories; 1000
/// samples of 30 histories and 1000 of 300 (fixed seeds). Every interval of the five measures
/// over all cells covers the true mean in at least 0.93 of them (the worst group 0.980 at 30
/// histories, 0.946 at 300); before the failure rule the worst covered 0.670 and 0.799.
#[test]
fn intervals_cover_rare_failures() {
    let population = Population::generate(
        &[
            "histories.generate.count=2000",
            "sweep.strategies=[\"required\"]",
            "sweep.budgets=[60,70,80]",
            "sweep.keep_recent=[0,3]",
            "sweep.false_negative=[0,0.1]",
            "sweep.false_positive=[0.05]",
            "compare.baseline=\"required\"",
            "charts.noise_budget=60",
        ],
        |name| MEASURES.contains(&name),
    );
    assert_eq!(population.labels.len(), 12);
    // The feasible shares of the groups: the case is 0.95–0.999.
    let truth = population.truth();
    let feasible: Vec<f64> = (0..12).map(|g| truth[g * 5 + 4].unwrap()).collect();
    assert!(
        feasible.iter().all(|&f| (0.95..=0.9995).contains(&f)),
        "{feasible:?}"
    );
    let mut worst = Vec::new();
    for (histories, seed) in [(30, 20261203), (300, 20261204)] {
        let repetitions = 1000;
        let covered = population.coverage(histories, repetitions, seed);
        let share = |k: usize| k as f64 / repetitions as f64;
        for (k, c) in covered.iter().enumerate() {
            assert_eq!(c.defined, repetitions);
            let name = format!(
                "{} {}, {histories} histories",
                population.labels[k / 5],
                MEASURES[k % 5]
            );
            assert!(share(c.now) >= 0.93, "{name}: {c:?}");
        }
        let now = covered.iter().map(|c| c.now).min().unwrap();
        let before = covered.iter().map(|c| c.before).min().unwrap();
        worst.push((now, before));
    }
    // The worst group's coverage of these seeds, with the rule and before it, for the
    // record: the rule is what lifts them above 0.93.
    assert_eq!(worst, WORST, "{worst:?}");
    assert!(worst.iter().all(|&(_, before)| before < 930));
}

const WORST: [(usize, usize); 2] = [(980, 670), (946, 799)];

/// Two measures over feasible cells, followed beside [`MEASURES`] in the simulation of the
/// main job's grid: their intervals have no failure rule.
const OTHERS: [&str; 2] = ["reduction_feasible", "required_retention_feasible"];

/// The simulation over the main job's grid, for the guide's figures (long: about 10 CPU
/// minutes): 4000 generated histories as the population, every one of the 480 groups, the
/// measures of [`MEASURES`] and [`OTHERS`], `COVERAGE_REPETITIONS` samples (1000 unless set)
/// of 30 and of 300 histories. Prints pooled and worst coverage with the failure rule and
/// before it.
/// `cargo test --release --test suite coverage_over_the_main_jobs_groups -- --ignored --nocapture`
#[test]
#[ignore]
fn coverage_over_the_main_jobs_groups() {
    let repetitions: usize = std::env::var("COVERAGE_REPETITIONS")
        .map(|r| r.parse().unwrap())
        .unwrap_or(1000);
    let population = Population::generate(&["histories.generate.count=4000"], |name| {
        MEASURES.contains(&name) || OTHERS.contains(&name)
    });
    let m = population.measures.len();
    let truth = population.truth();
    let feasible_at = population
        .measures
        .iter()
        .position(|(name, _)| name == "feasible")
        .unwrap();
    let band =
        |k: usize| truth[k / m * m + feasible_at].is_some_and(|f| (0.95..=0.999).contains(&f));
    println!("population: 4000 histories, {repetitions} samples each");
    for (histories, seed) in [(30, 20261203), (300, 20261204)] {
        let covered = population.coverage(histories, repetitions, seed);
        let share = |k: usize| k as f64 / repetitions as f64;
        for (measure, (name, acc)) in population.measures.iter().enumerate() {
            let of_measure: Vec<usize> = (measure..covered.len())
                .step_by(m)
                .filter(|&k| covered[k].defined == repetitions)
                .collect();
            let report = |pick: &dyn Fn(&Covered) -> usize, within: &dyn Fn(usize) -> bool| {
                let ks: Vec<usize> = of_measure.iter().copied().filter(|&k| within(k)).collect();
                if ks.is_empty() {
                    return "none".to_string();
                }
                let pooled =
                    ks.iter().map(|&k| share(pick(&covered[k]))).sum::<f64>() / ks.len() as f64;
                let worst = ks
                    .iter()
                    .copied()
                    .min_by_key(|&k| pick(&covered[k]))
                    .unwrap();
                let below = |b: f64| ks.iter().filter(|&&k| share(pick(&covered[k])) < b).count();
                format!(
                    "{} groups, pooled {pooled:.3}, worst {:.3} ({}, true mean {:.4}), {} below 0.93, {} below 0.90",
                    ks.len(),
                    share(pick(&covered[worst])),
                    population.labels[worst / m],
                    truth[worst].unwrap(),
                    below(0.93),
                    below(0.90)
                )
            };
            let middle = |k: usize| truth[k].is_some_and(|t| t > 0.02 && t < 0.98);
            println!(
                "{histories} histories, {name} (failure rule: {}):",
                acc.zero_fails
            );
            for (label, pick) in [
                ("now", &(|c: &Covered| c.now) as &dyn Fn(&Covered) -> usize),
                ("before", &|c: &Covered| c.before),
            ] {
                println!("  {label:6} all: {}", report(pick, &|_| true));
                println!(
                    "  {label:6} true mean in (0.02, 0.98): {}",
                    report(pick, &middle)
                );
                println!(
                    "  {label:6} feasible share 0.95-0.999: {}",
                    report(pick, &band)
                );
            }
        }
    }
}
