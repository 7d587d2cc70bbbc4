//! How numbers are written in tables: the same rules for every CSV and text output.

/// A fraction as a plain decimal with at least six digits after the point, and more when six
/// would not read back as the same number (so CSV and Parquet hold the same values).
pub fn fraction(x: f64) -> String {
    let mut s = String::new();
    write_fraction(&mut s, x);
    s
}

/// Appends [`fraction`]`(x)` to `out` without allocating: Rust's `Display` for `f64` is the
/// shortest text that reads back exactly (and never uses an exponent), padded here to six
/// decimals.
pub fn write_fraction(out: &mut String, x: f64) {
    use std::fmt::Write as _;
    let start = out.len();
    let _ = write!(out, "{x}");
    if !x.is_finite() {
        return;
    }
    let decimals = match out[start..].find('.') {
        Some(point) => out.len() - start - point - 1,
        None => {
            out.push('.');
            0
        }
    };
    for _ in decimals..6 {
        out.push('0');
    }
}

/// An optional fraction; `None` is written as an empty field.
pub fn opt_fraction(x: Option<f64>) -> String {
    x.map(fraction).unwrap_or_default()
}

/// A budget percentage: `50` for whole numbers, `12.5` otherwise.
pub fn budget(p: f64) -> String {
    format!("{p}")
}

/// A fraction as a percentage with one decimal, e.g. `30.9%`.
pub fn percent(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_have_six_digits_and_round_trip() {
        assert_eq!(fraction(0.5), "0.500000");
        assert_eq!(fraction(1.0), "1.000000");
        assert_eq!(fraction(0.0), "0.000000");
        let third = 1.0 / 3.0;
        assert_eq!(fraction(third).parse::<f64>().unwrap(), third);
        assert_eq!(fraction(1e-9).parse::<f64>().unwrap(), 1e-9);
        assert_eq!(fraction(0.33203125), "0.33203125");
        assert_eq!(fraction(2.0), "2.000000");
        // Where six decimals read back exactly they are what is written.
        for i in 0..2000 {
            let x = i as f64 / 1999.0;
            let six = format!("{x:.6}");
            if six.parse::<f64>() == Ok(x) {
                assert_eq!(fraction(x), six);
            } else {
                assert_eq!(fraction(x).parse::<f64>(), Ok(x));
            }
        }
        assert_eq!(budget(50.0), "50");
        assert_eq!(budget(12.5), "12.5");
        assert_eq!(percent(0.30859375), "30.9%");
    }
}
