//! Intervals of a share and the t quantile the intervals of a mean use.

use super::special::beta_quantile;

/// The 95 % Clopper–Pearson interval of a share of `k` in `n` independent trials: the 2.5 %
/// quantile of Beta(k, n − k + 1) (0 for `k = 0`) to the 97.5 % one of Beta(k + 1, n − k) (1
/// for `k = n`). Exact: each end misses the true share with a chance of 2.5 % at most.
pub fn clopper_pearson(k: u64, n: u64) -> (f64, f64) {
    let (k, n) = (k.min(n) as f64, n as f64);
    let low = if k <= 0.0 {
        0.0
    } else {
        beta_quantile(0.025, k, n - k + 1.0)
    };
    let high = if k >= n {
        1.0
    } else {
        beta_quantile(0.975, k + 1.0, n - k)
    };
    (low, high)
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom (exact table to 30, then the
/// Cornish–Fisher expansion, within 10⁻⁴ of the exact value).
pub fn t975(df: u64) -> f64 {
    const TABLE: [f64; 30] = [
        12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281, 2.2010,
        2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860, 2.0796, 2.0739,
        2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df as usize - 1],
        _ => {
            let z: f64 = 1.959_964;
            let v = df as f64;
            z + (z.powi(3) + z) / (4.0 * v)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * v * v)
        }
    }
}

/// The 95 % Wilson score interval of a share of `kept` successes in `of` independent trials;
/// `None` for none. Unlike the normal approximation it stays within 0 to 1 and has width at a
/// share of 0 or 1.
pub fn wilson(kept: u64, of: u64) -> Option<(f64, f64)> {
    if of == 0 {
        return None;
    }
    Some(wilson_score(kept as f64 / of as f64, of as f64, 1.959_964))
}

/// The Wilson score interval of a share `p` over `n` trials (`n` may be an effective sample
/// size, not a whole number) at quantile `z`, kept within [0, 1] against rounding.
pub fn wilson_score(p: f64, n: f64, z: f64) -> (f64, f64) {
    let z2 = z * z;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The Jeffreys interval of a share `p` over `n` trials (`n` may be an effective sample
/// size): the 2.5 % and 97.5 % quantiles of Beta(x + ½, n − x + ½) with `x = p·n`, from 0 at
/// `p = 0` and to 1 at `p = 1`. Where both parameters pass 1000 the Beta is nearly normal and
/// the Wilson interval stands in for it, saving the quantile search: at the switch its ends
/// are within 6 × 10⁻⁵ of Jeffreys's (under 0.6 % of the half-width), and closer beyond.
pub fn jeffreys(p: f64, n: f64) -> (f64, f64) {
    let x = p * n;
    let (a, b) = (x + 0.5, n - x + 0.5);
    if a > 1000.0 && b > 1000.0 {
        return wilson_score(p, n, 1.959_964);
    }
    let low = if p <= 0.0 {
        0.0
    } else {
        beta_quantile(0.025, a, b)
    };
    let high = if p >= 1.0 {
        1.0
    } else {
        beta_quantile(0.975, a, b)
    };
    (low, high)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_intervals_match_the_textbook() {
        // 5 of 10: centre 0.5, half 1.96·√(0.025 + 1.96²/400) / (1 + 1.96²/10) = 0.2634.
        let (a, b) = wilson(5, 10).unwrap();
        assert!(
            (a - 0.2366).abs() < 1e-4 && (b - 0.7634).abs() < 1e-4,
            "{a} {b}"
        );
        // 0 of 10: from 0 to 2·0.1388 = 0.2775, not the normal approximation's 0–0.
        let (a, b) = wilson(0, 10).unwrap();
        assert!(a.abs() < 1e-12 && (b - 0.2775).abs() < 1e-4, "{a} {b}");
        assert_eq!(wilson(0, 0), None);
    }

    #[test]
    fn clopper_pearson_matches_closed_forms() {
        // 0 of n: from 0 to 1 − 0.025^(1/n); n of n: from 0.025^(1/n) to 1; 1 of n starts at
        // 1 − 0.975^(1/n) (Beta(1, n)); n − 1 of n ends at 0.975^(1/n) (Beta(n, 1)).
        for n in [1u64, 3, 30, 300] {
            let root = |q: f64| q.powf(1.0 / n as f64);
            let (lo, hi) = clopper_pearson(0, n);
            assert!(lo == 0.0 && (hi - (1.0 - root(0.025))).abs() < 1e-12, "{n}");
            let (lo, hi) = clopper_pearson(n, n);
            assert!(hi == 1.0 && (lo - root(0.025)).abs() < 1e-12, "{n}");
            if n > 1 {
                assert!((clopper_pearson(1, n).0 - (1.0 - root(0.975))).abs() < 1e-12);
                assert!((clopper_pearson(n - 1, n).1 - root(0.975)).abs() < 1e-12);
            }
        }
        // 0 of 300: 0.012221, where Jeffreys's interval ends at 0.008331 (its Beta(½, 300½)).
        assert!((clopper_pearson(0, 300).1 - 0.012_221).abs() < 1e-6);
    }

    #[test]
    fn t_quantiles() {
        assert_eq!(t975(1), 12.7062);
        assert_eq!(t975(30), 2.0423);
        // Exact values 2.0211 (40), 2.0086 (50), 1.9840 (100).
        assert!((t975(40) - 2.0211).abs() < 1e-3);
        assert!((t975(100) - 1.9840).abs() < 1e-3);
    }
}
