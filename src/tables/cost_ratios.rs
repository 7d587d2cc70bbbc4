//! The report `ctxlab calibrate` prints (as text, or as CSV with `--csv`): per run and over
//! every run, estimated against recorded context size, and the recorded and modelled cache
//! shares (`crate::calibrate`).

use super::call_sizes::CallSize;
use super::Table;

/// Statistics of the ratios of a set of calls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioStats {
    /// Calls with a recorded size above zero.
    pub n: usize,
    pub recorded_mean: f64,
    pub estimated_mean: f64,
    pub mean: f64,
    /// Sample standard deviation (0 for a single call).
    pub sd: f64,
    pub min: f64,
    pub max: f64,
    /// Least-squares line `recorded ≈ fixed + slope × estimated`: `fixed` is what the provider
    /// counts that the transcript does not hold (a system prompt or tool definitions it did
    /// not log), `slope` the provider's tokens per estimated unit. `None` with fewer than two
    /// distinct estimates.
    pub fit: Option<(f64, f64)>,
}

impl RatioStats {
    /// `None` when no call has a recorded size.
    pub fn of<'a>(calls: impl IntoIterator<Item = &'a CallSize>) -> Option<RatioStats> {
        let (mut n, mut est, mut rec) = (0usize, 0f64, 0f64);
        let (mut sum, mut sum_sq) = (0f64, 0f64);
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        let (mut est_sq, mut est_rec) = (0f64, 0f64);
        for c in calls {
            let Some(r) = c.ratio() else { continue };
            n += 1;
            let (e, d) = (c.estimated as f64, c.recorded as f64);
            est += e;
            rec += d;
            est_sq += e * e;
            est_rec += e * d;
            sum += r;
            sum_sq += r * r;
            min = min.min(r);
            max = max.max(r);
        }
        if n == 0 {
            return None;
        }
        let nf = n as f64;
        let mean = sum / nf;
        let var = if n > 1 {
            ((sum_sq - nf * mean * mean) / (nf - 1.0)).max(0.0)
        } else {
            0.0
        };
        let sxx = est_sq - est * est / nf;
        let fit = (n > 1 && sxx > 0.0).then(|| {
            let slope = (est_rec - est * rec / nf) / sxx;
            ((rec - slope * est) / nf, slope)
        });
        Some(RatioStats {
            fit,
            n,
            recorded_mean: rec / nf,
            estimated_mean: est / nf,
            mean,
            sd: var.sqrt(),
            min,
            max,
        })
    }
}

/// One row of the report: a run, or `overall` over every call of every run.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioRow {
    pub run: String,
    /// The run's calls, shown where none has a recorded size (`overall`: 0).
    pub calls: usize,
    pub ratios: Option<RatioStats>,
    /// Share of the prompt read from cache, as the transcript records it.
    pub recorded_cache_share: Option<f64>,
    /// The same share as the cache model reads it, the run replayed under `raw`.
    pub modelled_cache_share: Option<f64>,
}

/// The report, column by column: token counts without decimals, ratios and shares with three.
pub fn table() -> Table<(), RatioRow> {
    let stat = |f: fn(&RatioStats) -> f64| move |_: &(), r: &RatioRow| r.ratios.as_ref().map(f);
    let fit =
        |f: fn((f64, f64)) -> f64| move |_: &(), r: &RatioRow| r.ratios.and_then(|s| s.fit).map(f);
    Table::new("cost_ratios")
        .text("run", |_: &(), _, r: &RatioRow| &r.run)
        // Calls with a recorded size; where none has one, every call.
        .whole("calls", |_, r| r.ratios.map_or(r.calls, |s| s.n) as u64)
        .opt_real("recorded_mean", stat(|s| s.recorded_mean))
        .decimals(0)
        .opt_real("estimated_mean", stat(|s| s.estimated_mean))
        .decimals(0)
        .opt_real("ratio_mean", stat(|s| s.mean))
        .decimals(3)
        .opt_real("ratio_sd", stat(|s| s.sd))
        .decimals(3)
        .opt_real("ratio_min", stat(|s| s.min))
        .decimals(3)
        .opt_real("ratio_max", stat(|s| s.max))
        .decimals(3)
        .opt_real("fit_fixed", fit(|(fixed, _)| fixed))
        .decimals(0)
        .opt_real("fit_slope", fit(|(_, slope)| slope))
        .decimals(3)
        .opt_real("recorded_cache_share", |_, r| r.recorded_cache_share)
        .decimals(3)
        .opt_real("modelled_cache_share", |_, r| r.modelled_cache_share)
        .decimals(3)
}
