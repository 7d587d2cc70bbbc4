//! Special functions behind the intervals: the Beta quantile, the regularised incomplete beta
//! function and ln Γ.

/// The `q` quantile of Beta(a, b): Newton's method on the regularised incomplete beta
/// function from the normal approximation, kept inside a bracket that every step narrows
/// (a step that would leave it halves it instead), so it converges whatever the start, in a
/// fixed sequence of steps (deterministic).
pub(super) fn beta_quantile(q: f64, a: f64, b: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    let ln_beta = ln_gamma(a) + ln_gamma(b) - ln_gamma(a + b);
    let (mean, n) = (a / (a + b), a + b);
    let sd = (mean * (1.0 - mean) / (n + 1.0)).sqrt();
    let z = if q < 0.5 { -1.959_964 } else { 1.959_964 };
    let mut x = (mean + z * sd).clamp(0.25 * mean, mean + 0.75 * (1.0 - mean));
    for _ in 0..200 {
        let f = incomplete_beta(x, a, b) - q;
        if f < 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        let density = ((a - 1.0) * x.ln() + (b - 1.0) * (-x).ln_1p() - ln_beta).exp();
        let newton = x - f / density;
        let next = if newton > lo && newton < hi && newton.is_finite() {
            newton
        } else {
            0.5 * (lo + hi)
        };
        if next == x || (next - x).abs() <= 1e-15 * x.min(1.0 - x) || hi - lo <= 1e-300 {
            return next;
        }
        x = next;
    }
    x
}

/// What Lentz's method puts in place of a 0 it would divide by.
const TINY: f64 = 1e-300;

/// One step of Lentz's method for a continued fraction with partial numerator `aa`: updates
/// `c` and `d` and returns the factor the fraction's value takes.
fn lentz_step(aa: f64, c: &mut f64, d: &mut f64) -> f64 {
    *d = 1.0 + aa * *d;
    if d.abs() < TINY {
        *d = TINY;
    }
    *c = 1.0 + aa / *c;
    if c.abs() < TINY {
        *c = TINY;
    }
    *d = 1.0 / *d;
    *d * *c
}

/// The regularised incomplete beta function I_x(a, b), by its continued fraction (Lentz's
/// method), on the side of the mean where it converges fast.
fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (-x).ln_1p()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(x, a, b) / a
    } else {
        1.0 - front * beta_fraction(1.0 - x, b, a) / b
    }
}

fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..100_000 {
        let m = m as f64;
        let m2 = 2.0 * m;
        // The even and the odd step of the fraction, each one step of Lentz's method.
        h *= lentz_step(m * (b - m) * x / ((qam + m2) * (a + m2)), &mut c, &mut d);
        let step = lentz_step(
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
            &mut c,
            &mut d,
        );
        h *= step;
        if (step - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: relative error below 10⁻¹⁴).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = G[0];
    for (i, g) in G.iter().enumerate().skip(1) {
        sum += g / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beta_quantiles_match_closed_forms() {
        // Beta(1, b): 1 − (1 − q)^(1/b); Beta(a, 1): q^(1/a); Beta(½, ½): sin²(πq/2).
        for (q, b) in [(0.025, 3.0), (0.975, 40.0), (0.5, 0.7)] {
            let x = beta_quantile(q, 1.0, b);
            assert!(
                (x - (1.0 - (1.0 - q).powf(1.0 / b))).abs() < 1e-12,
                "{q} {b} {x}"
            );
            let x = beta_quantile(q, b, 1.0);
            assert!((x - q.powf(1.0 / b)).abs() < 1e-12, "{q} {b} {x}");
        }
        let x = beta_quantile(0.025, 0.5, 0.5);
        let arcsine = (std::f64::consts::FRAC_PI_2 * 0.025).sin().powi(2);
        assert!((x - arcsine).abs() < 1e-12, "{x} {arcsine}");
        // Near a bound with a small count: Beta(1, 300), what a share of 0.9983 over an
        // effective 300 gives at its upper end.
        let x = beta_quantile(0.025, 1.0, 300.0);
        assert!((x - (1.0 - 0.975f64.powf(1.0 / 300.0))).abs() < 1e-12);
        // Larger parameters, against the hypergeometric series (computed apart from this code).
        let (a, b) = (15.769_419_408_585_184, 36.128_645_286_698_76);
        assert!((beta_quantile(0.025, a, b) - 0.187_741_521_788_544_75).abs() < 1e-10);
        assert!((beta_quantile(0.975, a, b) - 0.434_280_922_530_741_24).abs() < 1e-10);
    }
}
