//! Human-readable quantities: bytes, durations, rates, and numbers with
//! digit groups.

use std::time::Duration;

/// Bytes in binary units: `512 B`, `48.0 KiB`, `139.8 GiB`.
pub(crate) fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// A duration with three significant digits in a fitting unit:
/// `812 ns`, `41.2 µs`, `3.91 ms`, `1.25 s`.
pub(crate) fn duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    let (value, unit) = if s >= 1.0 {
        (s, "s")
    } else if s >= 1e-3 {
        (s * 1e3, "ms")
    } else if s >= 1e-6 {
        (s * 1e6, "µs")
    } else {
        (s * 1e9, "ns")
    };
    format!("{} {unit}", three_digits(value))
}

/// Milliseconds as a float, for JSON.
pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Bytes per second in decimal units, as transfer rates are usually given:
/// `11.9 GB/s`.
pub(crate) fn rate(bytes: u64, d: Duration) -> String {
    let s = d.as_secs_f64();
    if s <= 0.0 {
        return "-".to_owned();
    }
    let per_second = bytes as f64 / s;
    if per_second >= 1e9 {
        format!("{:.1} GB/s", per_second / 1e9)
    } else if per_second >= 1e6 {
        format!("{:.1} MB/s", per_second / 1e6)
    } else {
        format!("{:.1} kB/s", per_second / 1e3)
    }
}

/// A value with three significant digits (no exponent): `3.91`, `41.2`, `812`.
pub(crate) fn three_digits(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

/// An integer with thin digit groups: `4 194 304`.
pub(crate) fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_read_well() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(48 << 10), "48.0 KiB");
        assert_eq!(bytes(150_000_000_000), "139.7 GiB");
        assert_eq!(duration(Duration::from_nanos(812)), "812 ns");
        assert_eq!(duration(Duration::from_micros(41_200) / 1000), "41.2 µs");
        assert_eq!(duration(Duration::from_micros(3_910)), "3.91 ms");
        assert_eq!(duration(Duration::from_millis(1_250)), "1.25 s");
        assert_eq!(rate(12_000_000_000, Duration::from_secs(1)), "12.0 GB/s");
        assert_eq!(rate(1, Duration::ZERO), "-");
        assert_eq!(grouped(4_194_304), "4 194 304");
        assert_eq!(grouped(100), "100");
        assert_eq!(grouped(1000), "1 000");
    }
}
