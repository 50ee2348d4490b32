//! How the report writes its figures: times, byte sizes, counts, ratios and dates.

use std::time::{SystemTime, UNIX_EPOCH};

/// `1.23 ms`: three significant figures in the unit that fits.
pub fn time(ns: f64) -> String {
    let (value, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.decimals$} {unit}")
}

/// `9.1 KiB`.
pub fn bytes(n: u64) -> String {
    let n = n as f64;
    if n < 1024.0 {
        format!("{n} B")
    } else if n < 1024.0 * 1024.0 {
        format!("{:.1} KiB", n / 1024.0)
    } else if n < 1024.0 * 1024.0 * 1024.0 {
        format!("{:.1} MiB", n / (1024.0 * 1024.0))
    } else {
        format!("{:.2} GiB", n / (1024.0 * 1024.0 * 1024.0))
    }
}

/// `512,002`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut groups: Vec<&str> = Vec::new();
    let mut end = digits.len();
    while end > 3 {
        groups.push(&digits[end - 3..end]);
        end -= 3;
    }
    groups.push(&digits[..end]);
    groups.reverse();
    groups.join(",")
}

/// `81.3`: bytes per value held, one decimal.
pub fn per_value(bytes: f64) -> String {
    format!("{bytes:.1}")
}

/// `0.89x`: pinfold's median over a peer's, two decimals.
pub fn ratio(ratio: f64) -> String {
    format!("{ratio:.2}x")
}

/// The calendar date (UTC) of `at`, as `2026-11-24`.
pub fn utc_date(at: SystemTime) -> String {
    let days = at
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs() / 86_400);
    let (year, month, day) = civil_date(days);
    format!("{year:04}-{month:02}-{day:02}")
}

/// Year, month and day of the `days`-th day after 1970-01-01 in the Gregorian calendar.
fn civil_date(days: u64) -> (u64, u64, u64) {
    const DAYS_PER_400_YEARS: u64 = 146_097;
    // Count from 0000-03-01, so that the leap day is the last day of a year: 1970-01-01 is
    // day 719,468 of that count.
    let day = days + 719_468;
    let era = day / DAYS_PER_400_YEARS;
    let day_of_era = day % DAYS_PER_400_YEARS;
    // Years of 365 days, less a day every 4 years, plus one every 100, less one every 400.
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    // Months from March, of 31, 30, 31, 30, 31, 31, 30, 31, 30, 31, 31 and 29 or 28 days.
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day_of_month = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let (month, year_shift) = if month_from_march < 10 {
        (month_from_march + 3, 0)
    } else {
        (month_from_march - 9, 1)
    };
    (era * 400 + year_of_era + year_shift, month, day_of_month)
}
