//! The statistics behind every summary table: per group and measure, the number of values and
//! of histories, the mean, the standard deviation of the values, and a 95 % interval of the
//! mean that treats the **history** as the unit.
//!
//! Replicates, budgets and strategies of one history share that history, so their values are
//! correlated (a strategy that ignores flags gives identical replicates). The interval is
//! therefore cluster-robust: with `s_h` and `n_h` the sum and count of history `h`'s values,
//! `H` histories and `N = Σ n_h`, the mean is `m = Σ s_h / N`, its variance
//! `V = H / (H − 1) · Σ_h (s_h − m·n_h)² / N²` (the CR1 sandwich estimator of a ratio mean), and
//! the interval `m ± t(0.975, H − 1) · √V`. A group whose values all come from one history has
//! no interval (`None`, and `n_histories = 1` says why).
//!
//! Everything is kept as exact integer sums: values as integers (whole measures) or in fixed
//! point (fractions, 2⁻³² resolution), and the per-history totals `Σ s_h`, `Σ s_h²`, `Σ n_h²`,
//! `Σ s_h·n_h` as 128-bit integers. Integer addition is associative, so the summary — interval
//! included — is the same bit for bit whatever the thread count, the chunking, or how shards
//! split the histories (a history never spans two shards), and no row needs to stay in memory.
//!
//! **Means of shares.** A measure whose values all lie in [0, 1] (a retention, a reduction, a
//! 0/1 flag such as `feasible`) is a share, and the interval above fails it at the bounds: a
//! group whose cells are all 1 has `V = 0` and gets `[1, 1]`, and near 1 the interval reaches
//! past 1. A share's interval is instead Jeffreys's interval for a binomial proportion on the
//! **effective** sample (Korn and Graubard's way of carrying a binomial interval over to a
//! clustered sample): with `p` the pooled mean, the design effect `deff = V / (p(1 − p) / N)`
//! (the CR1 variance over what N independent trials would give) makes the effective sample
//! `n* = N / deff = p(1 − p) / V`; it is shrunk by `(t(0.975, N − 1) / t(0.975, H − 1))²` for
//! the few degrees of freedom H histories give, and the interval runs between the 2.5 % and
//! 97.5 % quantiles of Beta(x + ½, n − x + ½), `x = p·n` — from 0 when `p = 0`, to 1 when
//! `p = 1`. Where the histories do not vary at all (`V = 0`: every history has the same mean,
//! which every group of all 1s or all 0s does) no design effect can be estimated, and the
//! history is taken as the unit: `n* = N² / Σ n_h²`, which is `H` when histories give equal
//! counts (as if a history's values were one value repeated: the largest design effect there
//! is). The interval is then inside [0, 1] and has width wherever `H ≥ 2`.
//!
//! Why Jeffreys: simulated with 5 correlated 0/1 cells per history (2000 repetitions each,
//! `acc::share_tests::share_intervals_cover_at_the_bounds`), it covers a true mean of 0.5, 0.99 and
//! 0.9999 in 0.947, 0.974, 0.990 of repetitions at 30 histories and 0.943, 0.940, 0.967 at 300,
//! where the normal-theory interval covers 0.944, 0.654, 0.010 and 0.943, 0.912, 0.097. It errs on
//! the safe side at 30 histories and 0.99 (0.980 over 20 000 repetitions). Wilson's score interval
//! on the effective sample `p(1 − p) / V` with `z = t(0.975, H − 1)`, tried first, covers 0.961
//! there (20 000 repetitions) but only 0.900 at 300 histories and 0.9999: its upper end falls below
//! 0.9999 as soon as one history has a 0. Clopper–Pearson over-covers by construction,
//! Agresti–Coull is wider than Wilson near the bounds, and a bootstrap is no function of the sums,
//! so it would not merge across shards. At 30 histories and 0.9999 no interval that has width at
//! all 1s covers less than 0.985: all 150 cells are 1 with at least that chance (1 − 150 · 10⁻⁴).
//! Jeffreys's interval is a pure function of the same exact sums, so it keeps the bit-identity
//! above. Away from the bounds it is nearly the normal-theory interval: at a mean of 0.5 its width
//! is 0.976 of that one's on average at 30 histories and 0.998 at 300, and its ends move by at most
//! 0.013 and 0.0003.
//!
//! **Shares where 0 is a failure.** A measure over all cells counts an infeasible cell as 0
//! (`required_retention_all`, `feasible` itself). Where failures are rare and come by history,
//! a sample of histories mostly holds none, and the interval above, built on the spread the
//! sample shows, sits above the true mean (samples of 30 generated histories: covered in 0.52
//! of them at worst over the main job's groups; docs/statistics.md has the figures). Such a measure (`zero_fails`) keeps
//! three more sums: the histories with a value at 0 (`F` of the `H`), their values and their
//! sum. Histories are independent, so the share of failing ones has an exact binomial interval
//! `[φ₋, φ₊]` (Clopper–Pearson, which unlike Jeffreys's keeps each end's miss under 2.5 % at
//! `F = 0`: 0 of 300 allows up to 0.0122, Jeffreys's 0.0083 is missed by a 0.0095 share 5.7 %
//! of the time). The mean is `(1 − φ)·m_ok + φ·m_fail` over the histories without and with a
//! failure, so the interval reaches down to `(1 − φ₊)·m_ok + φ₊·m_fail⁻` and up to
//! `(1 − φ₋)·m_ok⁺ + φ₋·m_fail`, each part's mean counted with one more history of `N / H`
//! values at the far bound (all 0 among the failing ones, all 1 among the others: with no
//! failing history seen, the unseen ones are taken to keep nothing). The share's interval is
//! the union of this one and Jeffreys's: it moves only where the sample holds few failing
//! histories (or few that do not fail), and it is still a function of exact integer sums.

mod acc;
mod intervals;
mod special;
mod summary;

pub use acc::{Acc, Partial};
pub use intervals::{clopper_pearson, jeffreys, t975, wilson, wilson_score};
pub use summary::{GroupAcc, HistoryPartials, PairAcc, Summary};
