//! The report `bench-table --write` makes: the README summary's choice of rows, the chart's
//! bars, the replacement of the README's summary between its markers, and the date.

use std::time::{Duration, UNIX_EPOCH};

use pinfold_benches::{
    SUMMARY_END, SUMMARY_MAX_ROWS, SUMMARY_START, Standing, format, ratio_chart, replace_summary,
    spelled_out, summary_rows, summary_table,
};

/// A row where pinfold takes `ratio` times the fastest peer's 100 ns.
fn standing(name: &str, ratio: f64) -> Standing {
    Standing {
        name: name.to_string(),
        description: format!("what {name} measures"),
        pinfold_ns: 100.0 * ratio,
        peer: "futures-util".to_string(),
        peer_ns: 100.0,
    }
}

fn names<'a>(rows: &[&'a Standing]) -> Vec<&'a str> {
    rows.iter().map(|row| row.name.as_str()).collect()
}

#[test]
fn summary_is_the_named_rows_and_the_best_and_worst_of_the_rest_by_ratio() {
    let rows = [
        standing("a", 0.5),
        standing("fastest", 0.1),
        standing("b", 2.0),
        standing("middle", 0.9),
        standing("slowest", 9.0),
        standing("c", 1.1),
    ];
    let summary = summary_rows(&rows, &["c", "a", "b"]);
    assert_eq!(names(&summary), ["fastest", "a", "c", "b", "slowest"]);
}

#[test]
fn summary_never_has_more_than_ten_rows() {
    let rows: Vec<Standing> = (0..40)
        .map(|i| standing(&format!("row{i}"), 0.05 * (i + 1) as f64))
        .collect();
    let every_name: Vec<String> = rows.iter().map(|row| row.name.clone()).collect();
    let named: Vec<&str> = every_name.iter().map(String::as_str).collect();
    let summary = summary_rows(&rows, &named);
    assert_eq!(summary.len(), SUMMARY_MAX_ROWS);
    // The best and worst of the rows not named are still there.
    assert!(names(&summary).contains(&"row39"));
}

#[test]
fn summary_skips_named_rows_without_results_and_counts_a_lone_other_row_once() {
    let rows = [standing("a", 0.5), standing("other", 3.0)];
    let summary = summary_rows(&rows, &["missing", "a"]);
    assert_eq!(names(&summary), ["a", "other"]);
}

#[test]
fn summary_table_has_a_line_per_row_with_its_ratio() {
    let rows = [standing("keyed_churn_100k/pinfold-growable", 0.42)];
    let chosen: Vec<&Standing> = rows.iter().collect();
    let table = summary_table(&chosen, "From a run.");
    assert!(table.starts_with("From a run.\n\n| workload |"));
    assert!(table.contains(
        "| `keyed_churn_100k` (pinfold-growable): what keyed_churn_100k/pinfold-growable \
         measures | 42.0 ns | futures-util 100 ns | 0.42x |"
    ));
    assert_eq!(table.lines().count(), 2 + 2 + rows.len());
}

#[test]
fn a_description_that_refers_to_the_row_above_is_spelled_out() {
    let above = "join_all of 10 futures that yield once";
    assert_eq!(
        spelled_out(above, "the same under block_on"),
        "join_all of 10 futures that yield once under block_on"
    );
    assert_eq!(
        spelled_out(above, "as above, on 4 threads"),
        "join_all of 10 futures that yield once, on 4 threads"
    );
    assert_eq!(
        spelled_out(above, "merge of 16 streams"),
        "merge of 16 streams"
    );
}

#[test]
fn chart_has_one_bar_per_row() {
    let rows: Vec<Standing> = [0.01, 0.3, 1.0, 1.7, 40.0]
        .iter()
        .enumerate()
        .map(|(i, &ratio)| standing(&format!("row{i}"), ratio))
        .collect();
    let svg = ratio_chart(&rows);
    assert!(svg.starts_with("<svg "));
    assert!(svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches(r#"class="bar""#).count(), rows.len());
    // A ratio past the scale is drawn to its end and still printed.
    assert!(svg.contains("40.00x futures-util"));
    assert!(ratio_chart(&[]).matches(r#"class="bar""#).next().is_none());
}

#[test]
fn chart_escapes_names() {
    let svg = ratio_chart(&[standing("a<b>&c", 0.5)]);
    assert!(svg.contains("a&lt;b&gt;&amp;c"));
    assert!(!svg.contains("a<b>"));
}

#[test]
fn summary_replaces_what_stands_between_the_markers_and_nothing_else() {
    let readme = format!("# title\n\nbefore\n{SUMMARY_START}\nold\nlines\n{SUMMARY_END}\nafter\n");
    let new = replace_summary(&readme, "new table").unwrap();
    assert_eq!(
        new,
        format!("# title\n\nbefore\n{SUMMARY_START}\nnew table\n{SUMMARY_END}\nafter\n")
    );
    // Replacing again with the same block changes nothing.
    assert_eq!(replace_summary(&new, "new table\n").unwrap(), new);
}

#[test]
fn summary_is_not_written_without_one_pair_of_markers_in_order() {
    let missing_end = format!("{SUMMARY_START}\nold\n");
    assert!(replace_summary(&missing_end, "x").is_err());
    let missing_start = format!("old\n{SUMMARY_END}\n");
    assert!(replace_summary(&missing_start, "x").is_err());
    let reversed = format!("{SUMMARY_END}\nold\n{SUMMARY_START}\n");
    assert!(replace_summary(&reversed, "x").is_err());
    let twice = format!("{SUMMARY_START}\n{SUMMARY_END}\n{SUMMARY_START}\n{SUMMARY_END}\n");
    assert!(replace_summary(&twice, "x").is_err());
}

#[test]
fn dates_are_the_utc_calendar_day() {
    let day = |days: u64, seconds: u64| {
        format::utc_date(UNIX_EPOCH + Duration::from_secs(days * 86_400 + seconds))
    };
    assert_eq!(day(0, 0), "1970-01-01");
    assert_eq!(day(0, 86_399), "1970-01-01");
    assert_eq!(day(59, 0), "1970-03-01");
    assert_eq!(day(11_016, 0), "2000-02-29");
    assert_eq!(day(11_017, 0), "2000-03-01");
    assert_eq!(day(19_722, 0), "2023-12-31");
    assert_eq!(day(20_416, 0), "2025-11-24");
}
