//! How numbers are written on charts and in the Markdown report (short, for people; the
//! tables keep full precision). Budgets are written by [`super::numbers::budget`].

/// A rate in 0–1 as a percentage without float noise: `0.1` → `10 %`, `0.025` → `2.5 %`.
pub fn rate(x: f64) -> String {
    format!("{} %", trim(x * 100.0))
}

/// A measured rate in 0–1 as a percentage with one decimal: `0.1333` → `13.3 %`.
pub fn rate_precise(x: f64) -> String {
    format!("{:.1} %", x * 100.0)
}

/// A fraction with three decimals, as the report's tables print means and intervals.
pub fn fraction3(x: f64) -> String {
    format!("{x:.3}")
}

/// An optional fraction with three decimals; a dash when there is none.
pub fn opt_fraction3(x: Option<f64>) -> String {
    x.map(fraction3).unwrap_or_else(|| "—".into())
}

/// A tick label on a 0–1 axis: `0`, `0.2`, …, `1`.
pub fn tick(x: f64) -> String {
    trim(x)
}

/// A duration in seconds: `0.42 s`, `12.3 s`, `4 min 12 s`.
pub fn duration(seconds: f64) -> String {
    if seconds < 1.0 {
        format!("{seconds:.2} s")
    } else if seconds < 120.0 {
        format!("{seconds:.1} s")
    } else {
        let whole = seconds.round() as u64;
        format!("{} min {} s", whole / 60, whole % 60)
    }
}

/// A number with at most six decimals and no trailing zeros, so `0.1 * 100` prints `10`.
fn trim(x: f64) -> String {
    let rounded = (x * 1e6).round() / 1e6;
    // `+ 0.0` turns −0 into 0.
    format!("{}", rounded + 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_read_as_people_write_them() {
        assert_eq!(rate(0.1), "10 %");
        assert_eq!(rate(0.07), "7 %");
        assert_eq!(rate(0.025), "2.5 %");
        assert_eq!(rate(0.0), "0 %");
        assert_eq!(fraction3(0.9125), "0.912");
        assert_eq!(fraction3(1.0), "1.000");
        assert_eq!(opt_fraction3(None), "—");
        assert_eq!(tick(0.6000000000000001), "0.6");
        assert_eq!(tick(-0.0), "0");
        assert_eq!(duration(0.5), "0.50 s");
        assert_eq!(duration(12.34), "12.3 s");
        assert_eq!(duration(252.0), "4 min 12 s");
    }
}
