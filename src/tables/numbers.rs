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

/// Appends `x` to `out` exactly as `Display` writes it (`{x}`: the shortest digits that read
/// back as `x`, never an exponent), without `fmt`: ryu finds the digits, which may come in
/// scientific form (`1e-7`, `1.5e20`), and they are laid out here as a plain decimal.
pub fn push_display_f64(out: &mut Vec<u8>, x: f64) {
    if !x.is_finite() {
        use std::io::Write as _;
        let _ = write!(out, "{x}");
        return;
    }
    if x.is_sign_negative() {
        out.push(b'-');
    }
    if x == 0.0 {
        out.push(b'0');
        return;
    }
    let start = out.len();
    if !ryu_layout(out, x.abs()) {
        // A tie between two shortest candidates: ryu rounds it to even, `Display` up.
        out.truncate(start);
        use std::io::Write as _;
        let _ = write!(out, "{}", x.abs());
    }
}

/// Lays out ryu's digits of `x` (finite, positive) as a plain decimal; `false` when `x` lies
/// exactly halfway between two shortest candidates, where ryu and `Display` part ways.
fn ryu_layout(out: &mut Vec<u8>, x: f64) -> bool {
    let mut buf = ryu::Buffer::new();
    let text = buf.format_finite(x.abs()).as_bytes();
    let (mantissa, exponent) = match text.iter().position(|&b| b == b'e') {
        Some(e) => (&text[..e], parse_exponent(&text[e + 1..])),
        None => (text, 0),
    };
    // The digits without the point, and where the point goes among them.
    let mut digits = [0u8; 24];
    let mut len = 0;
    let mut point = mantissa.len() as i32;
    for &b in mantissa {
        if b == b'.' {
            point = len as i32;
        } else {
            digits[len] = b;
            len += 1;
        }
    }
    point += exponent;
    // `Display` writes no trailing zeros after the point (ryu writes `2.0`).
    while len > 0 && digits[len - 1] == b'0' && (len as i32) > point {
        len -= 1;
    }
    let digits = &digits[..len];
    // x = m × 2^q with m odd has exactly -q digits after the point; a tie at the digits kept
    // needs exactly one more, a 5. Whole numbers are exact below 2^53.
    let bits = x.to_bits();
    let (m, e) = (bits & ((1 << 52) - 1), (bits >> 52) as i32);
    let (m, q) = match e {
        0 => (m, -1074),
        _ => (m | (1 << 52), e - 1075),
    };
    let q = q + m.trailing_zeros() as i32;
    let decimals = len as i32 - point;
    if (q >= 0 && x >= 9_007_199_254_740_992.0) || (q < 0 && -q == decimals.max(0) + 1) {
        return false;
    }
    if point <= 0 {
        out.extend_from_slice(b"0.");
        out.resize(out.len() + (-point) as usize, b'0');
        out.extend_from_slice(digits);
    } else if point as usize >= len {
        out.extend_from_slice(digits);
        out.resize(out.len() + point as usize - len, b'0');
    } else {
        let (whole, fraction) = digits.split_at(point as usize);
        out.extend_from_slice(whole);
        out.push(b'.');
        out.extend_from_slice(fraction);
    }
    true
}

fn parse_exponent(text: &[u8]) -> i32 {
    let (sign, digits) = match text.first() {
        Some(b'-') => (-1, &text[1..]),
        _ => (1, text),
    };
    sign * digits
        .iter()
        .fold(0i32, |n, &d| n * 10 + i32::from(d - b'0'))
}

/// Appends [`fraction`]`(x)` to `out`, the bytes of [`write_fraction`] without `fmt`.
pub fn push_fraction(out: &mut Vec<u8>, x: f64) {
    // Most shares in a table (0, 1, a half, a flag rate) read back exactly from six decimals:
    // then the shortest digits are those six (two six-decimal texts cannot read back as the
    // same double below 2^53 / 10^6), written from the integer `x × 10^6` without ryu.
    let micros = (x * 1e6).round();
    if micros.abs() < 1e15 && micros / 1e6 == x && !(x == 0.0 && x.is_sign_negative()) {
        let micros = micros as i64;
        if micros < 0 {
            out.push(b'-');
        }
        let m = micros.unsigned_abs();
        push_whole(out, m / 1_000_000);
        out.push(b'.');
        let mut frac = itoa::Buffer::new();
        let frac = frac.format(m % 1_000_000 + 1_000_000).as_bytes();
        out.extend_from_slice(&frac[1..]);
        return;
    }
    let start = out.len();
    push_display_f64(out, x);
    if !x.is_finite() {
        return;
    }
    let decimals = match out[start..].iter().position(|&b| b == b'.') {
        Some(point) => out.len() - start - point - 1,
        None => {
            out.push(b'.');
            0
        }
    };
    for _ in decimals..6 {
        out.push(b'0');
    }
}

/// Appends `x` with exactly `places` decimals, as `{x:.places$}` writes it (`0.333`, `-1.000000`).
pub fn push_fixed(out: &mut Vec<u8>, x: f64, places: usize) {
    use std::io::Write as _;
    let _ = write!(out, "{x:.places$}");
}

/// Appends a whole number's decimal digits.
pub fn push_whole(out: &mut Vec<u8>, x: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(x).as_bytes());
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

    /// The byte formatting writes what `Display` and `write_fraction` write, on the values
    /// tables hold (shares k/n, budgets) and on doubles of every magnitude.
    #[test]
    fn byte_formatting_matches_display() {
        let check = |x: f64| {
            let mut bytes = Vec::new();
            push_display_f64(&mut bytes, x);
            assert_eq!(
                std::str::from_utf8(&bytes).unwrap(),
                format!("{x}"),
                "{x:e}"
            );
            bytes.clear();
            push_fraction(&mut bytes, x);
            assert_eq!(std::str::from_utf8(&bytes).unwrap(), fraction(x), "{x:e}");
        };
        for x in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -0.25,
            0.000001,
            -0.000001,
            999999.5,
            1e9 + 0.125,
            12.5,
            50.0,
            65537.0 / 131072.0,
            1658206780088562.0 + 0.25,
            1e-9,
            1e-5,
            1e-4,
            1e15,
            1e16,
            1e17,
        ] {
            check(x);
        }
        for x in [
            1.5e300,
            2.5e-300,
            f64::MIN_POSITIVE,
            f64::MAX,
            5e-324,
            f64::NAN,
            f64::INFINITY,
        ] {
            check(x);
            check(-x);
        }
        for n in 1..400u32 {
            for k in 0..=n {
                check(f64::from(k) / f64::from(n));
                check(1.0 - f64::from(k) / f64::from(n));
            }
        }
        // Doubles from every exponent: a fixed xorshift stream of bit patterns.
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            check(f64::from_bits(s));
        }
        let mut bytes = Vec::new();
        // Fixed decimals round as `format!` does: 2/3 → 0.667, 10.5 → 10 (to even), -0.25 →
        // -0.250000.
        for (x, places, text) in [
            (2.0 / 3.0, 3, "0.667"),
            (10.5, 0, "10"),
            (-0.25, 6, "-0.250000"),
            (1e20, 0, "100000000000000000000"),
        ] {
            bytes.clear();
            push_fixed(&mut bytes, x, places);
            assert_eq!(bytes, text.as_bytes());
        }
        for x in [0, 1, 9, 10, 12345, u64::MAX] {
            bytes.clear();
            push_whole(&mut bytes, x);
            assert_eq!(bytes, x.to_string().as_bytes());
        }
    }
}
