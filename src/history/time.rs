//! When a record was written, as a transcript timestamps it: milliseconds since the Unix epoch,
//! read from and written as RFC 3339 (`2026-02-07T00:13:59.219Z`, what Claude Code writes).
//!
//! Only what a cache's lifetime needs: gaps between model calls. Offsets (`+02:00`) are read
//! and written back as UTC; precision beyond milliseconds is cut.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A point in time, in milliseconds since 1970-01-01T00:00:00Z.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub i64);

impl Time {
    /// Seconds from `earlier` to `self` (negative when `self` is earlier).
    pub fn seconds_since(self, earlier: Time) -> f64 {
        (self.0 - earlier.0) as f64 / 1000.0
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fff…](Z|±HH:MM)`.
    pub fn parse(s: &str) -> Result<Time, String> {
        let bad =
            || format!("timestamp {s:?}: expected RFC 3339 such as \"2026-02-07T00:13:59.219Z\"");
        // Every slice below is at a byte offset: only ASCII text can be a timestamp, and any
        // other (a multi-byte character where a digit belongs) is refused before it is cut.
        let b = s.as_bytes();
        if !s.is_ascii()
            || b.len() < 20
            || b[4] != b'-'
            || b[7] != b'-'
            || !matches!(b[10], b'T' | b't' | b' ')
        {
            return Err(bad());
        }
        if b[13] != b':' || b[16] != b':' {
            return Err(bad());
        }
        let num = |from: usize, to: usize| -> Result<i64, String> {
            let part = &s[from..to];
            if part.bytes().all(|c| c.is_ascii_digit()) {
                part.parse::<i64>().map_err(|_| bad())
            } else {
                Err(bad())
            }
        };
        let (year, month, day) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
        let (hour, minute, second) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
        let mut rest = 19;
        let mut millis = 0i64;
        if b[rest] == b'.' {
            let start = rest + 1;
            let mut end = start;
            while end < b.len() && b[end].is_ascii_digit() {
                end += 1;
            }
            if end == start {
                return Err(bad());
            }
            let digits = &s[start..end.min(start + 3)];
            millis = digits.parse::<i64>().map_err(|_| bad())? * 10i64.pow(3 - digits.len() as u32);
            rest = end;
        }
        let offset_minutes = match &s[rest..] {
            "Z" | "z" => 0,
            tz if tz.len() == 6 && matches!(&tz[..1], "+" | "-") && &tz[3..4] == ":" => {
                let sign = if tz.starts_with('-') { -1 } else { 1 };
                sign * (num(rest + 1, rest + 3)? * 60 + num(rest + 4, rest + 6)?)
            }
            _ => return Err(bad()),
        };
        let days_in_month = match month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
            2 => 28,
            _ => return Err(bad()),
        };
        if day < 1 || day > days_in_month || hour > 23 || minute > 59 || second > 60 {
            return Err(bad());
        }
        let seconds =
            days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
                - offset_minutes * 60;
        Ok(Time(seconds * 1000 + millis))
    }
}

/// Days from 1970-01-01 to the given date of the proleptic Gregorian calendar (Howard
/// Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count from 1970-01-01 (the inverse of [`days_from_civil`]).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0.div_euclid(1000);
        let millis = self.0.rem_euclid(1000);
        let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
        let s = secs.rem_euclid(86_400);
        write!(
            f,
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
            s / 3600,
            s / 60 % 60,
            s % 60
        )
    }
}

impl Serialize for Time {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Time::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_rfc3339() {
        let t = Time::parse("2026-02-07T00:13:59.219Z").unwrap();
        // 2026-02-07 is day 20 491 after 1970-01-01: 20 491 × 86 400 + 13 × 60 + 59 seconds.
        assert_eq!(t.0, (20_491 * 86_400 + 13 * 60 + 59) * 1000 + 219);
        assert_eq!(t.to_string(), "2026-02-07T00:13:59.219Z");
        assert_eq!(Time::parse("1970-01-01T00:00:00Z").unwrap(), Time(0));
        assert_eq!(
            Time::parse("1970-01-01T01:00:00.5+01:00").unwrap(),
            Time(500)
        );
        assert_eq!(Time(-1).to_string(), "1969-12-31T23:59:59.999Z");
        assert_eq!(
            Time::parse("2024-02-29T12:00:00.123456Z")
                .unwrap()
                .to_string(),
            "2024-02-29T12:00:00.123Z"
        );
        for bad in [
            "2026-02-30T00:00:00Z",
            "2026-02-07",
            "2026-02-07T00:13:59",
            "2026-13-01T00:00:00Z",
            "yesterday at noon, roughly",
            // A multi-byte character where a byte offset falls (the seconds, the offset).
            "2026-02-07T00:13:5é.219Z",
            "2026-02-07T00:13:59.219é",
            "2026-02-07T00:13:59+0é:00",
            "2026-02-07T00:13:59.219+日本",
            "２０２６-02-07T00:13:59.219Z",
        ] {
            let e = Time::parse(bad).unwrap_err();
            assert!(e.contains("expected RFC 3339"), "{e}");
        }
        let later = Time::parse("2026-02-07T00:19:59.219Z").unwrap();
        assert_eq!(later.seconds_since(t), 360.0);
    }
}
