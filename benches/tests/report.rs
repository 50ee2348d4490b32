//! The report `bench-table --write` makes: the README summary's choice of rows, the chart's
//! bars, the replacement of the README's summary between its markers, the date, the CPU's
//! name, the records of each CPU and what is made from several of them.

use std::time::{Duration, UNIX_EPOCH};

use pinfold_benches::{
    Allocs, Cpu, CpuRatio, Measured, PeerRow, Record, SUMMARY_END, SUMMARY_MAX_ROWS, SUMMARY_START,
    Standing, TABLES, Table, Workload, bytes_per_value, claims, cpu_table, format, index_document,
    index_table, order_records, peer_rows, ratio_chart, read_records, readme_summary,
    replace_summary, row_peer, spelled_out, standings, summary_rows, summary_table,
};

/// A row where pinfold takes `ratio` times the fastest peer's 100 ns on one CPU.
fn standing(name: &str, ratio: f64) -> Standing {
    Standing {
        name: name.to_string(),
        description: format!("what {name} measures"),
        times: vec![CpuRatio {
            cpu: "Zen 5".to_string(),
            pinfold_ns: 100.0 * ratio,
            peer: "futures-util".to_string(),
            peer_ns: 100.0,
        }],
        instructions: None,
        bytes_per_value: None,
    }
}

/// pinfold's `pinfold_ns` on Zen 3 against futures-buffered's 100 ns there.
fn zen3_against_futures_buffered(pinfold_ns: f64) -> CpuRatio {
    CpuRatio {
        cpu: "Zen 3".to_string(),
        pinfold_ns,
        peer: "futures-buffered".to_string(),
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
fn summary_table_has_a_line_per_row_with_its_ratio_on_each_cpu_and_in_instructions() {
    let mut row = standing("keyed_churn_100k/pinfold-growable", 0.42);
    row.instructions = Some((50.0, "futures-util".to_string(), 200.0));
    let rows = [row];
    let chosen: Vec<&Standing> = rows.iter().collect();
    let cpus = ["Zen 5".to_string(), "Zen 3".to_string()];
    let table = summary_table(&chosen, &cpus, "From a run.");
    assert!(table.starts_with(
        "From a run.\n\n| workload | peer | time, Zen 5 | time, Zen 3 | instructions |"
    ));
    assert!(
        table.contains(
            "| `keyed_churn_100k` (pinfold-growable) | futures-util | 0.42x | — | 0.25x |"
        ),
        "{table}"
    );
    assert_eq!(table.lines().count(), 2 + 2 + rows.len());
}

#[test]
fn a_summary_row_names_the_peer_of_most_of_its_ratios_once() {
    let mut row = standing("keyed_churn_100k", 0.5);
    row.times.push(zen3_against_futures_buffered(60.0));
    row.instructions = Some((30.0, "futures-buffered".to_string(), 100.0));
    row.bytes_per_value = Some((48.0, "futures-concurrency".to_string(), 96.0));
    assert_eq!(row_peer(&row), Some("futures-buffered"));
    let cpus = ["Zen 5".to_string(), "Zen 3".to_string()];
    let table = summary_table(&[&row], &cpus, "From a run.");
    assert!(
        table.contains(
            "| `keyed_churn_100k` | futures-buffered | 0.50x futures-util | 0.60x | 0.30x | \
             48.0 (0.50x futures-concurrency) |"
        ),
        "{table}"
    );
    let mut bare = standing("bare", 1.0);
    bare.times.clear();
    assert_eq!(row_peer(&bare), None);
    assert!(summary_table(&[&bare], &cpus, "").contains("| `bare` | — | — | — | — |"));
}

#[test]
fn a_rows_summary_ratio_is_its_worst_cpu() {
    let mut row = standing("a", 0.5);
    row.times.push(zen3_against_futures_buffered(120.0));
    assert_eq!(row.worst(), 1.2);
    assert_eq!(row.best(), 0.5);
    let rows = [row, standing("b", 1.0)];
    assert_eq!(names(&summary_rows(&rows, &["a", "b"])), ["b", "a"]);
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
fn chart_has_a_bar_per_cpu_and_one_for_instructions() {
    let mut rows: Vec<Standing> = [0.01, 0.3, 1.0, 1.7, 40.0]
        .iter()
        .enumerate()
        .map(|(i, &ratio)| standing(&format!("row{i}"), ratio))
        .collect();
    rows[1].instructions = Some((3.0, "futures-buffered".to_string(), 2.0));
    let svg = ratio_chart(&rows);
    assert!(svg.starts_with("<svg "));
    assert!(svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches(r#"class="bar""#).count(), rows.len() + 1);
    // A ratio past the scale is drawn to its end and still printed.
    assert!(svg.contains("40.00x futures-util (Zen 5)"));
    assert!(svg.contains("1.50x futures-buffered (instructions)"));
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

#[test]
fn cpus_are_named_by_vendor_microarchitecture_family_and_model() {
    let cpuinfo = |family: u32, model: u32| {
        format!(
            "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: {family}\n\
             model\t\t: {model}\nmodel name\t: AMD EPYC\nprocessor\t: 1\n"
        )
    };
    let zen5 = Cpu::from_cpuinfo(&cpuinfo(26, 2)).unwrap();
    assert_eq!(zen5.slug(), "amd-zen5-family26-model2");
    assert_eq!(zen5.short(), "Zen 5");
    assert_eq!(
        zen5.label(),
        "AMD EPYC (Zen 5; AuthenticAMD family 26, model 2)"
    );
    assert_eq!(Cpu::from_cpuinfo(&cpuinfo(25, 1)).unwrap().short(), "Zen 3");
    assert_eq!(
        Cpu::from_cpuinfo(&cpuinfo(25, 0x21)).unwrap().short(),
        "Zen 3"
    );
    assert_eq!(
        Cpu::from_cpuinfo(&cpuinfo(25, 0x11)).unwrap().short(),
        "Zen 4"
    );
    assert_eq!(
        Cpu::from_cpuinfo(&cpuinfo(25, 0x61)).unwrap().short(),
        "Zen 4"
    );
    let intel = Cpu::from_cpuinfo(
        "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nmodel name\t: Xeon\n",
    )
    .unwrap();
    assert_eq!(intel.slug(), "intel-family6-model143");
    assert_eq!(intel.short(), "intel 6/143");
    assert!(Cpu::from_cpuinfo("vendor_id : AuthenticAMD\n").is_none());
}

/// A record of `short` with `ready_512k` timed at `pinfold_ns` against futures-buffered's 100
/// ns and futures-util's 400 ns, and counted at `instructions` per item against 100.
fn record(short: &str, date: &str, pinfold_ns: f64, instructions: Option<f64>) -> Record {
    let mut record = Record {
        slug: format!("amd-{short}"),
        short: short.to_string(),
        cpu: format!("AMD EPYC ({short})"),
        cpus: 2,
        date: date.to_string(),
        commit: "`abc1234`".to_string(),
        toolchain: "rustc 1.95.0".to_string(),
        run: "a full run".to_string(),
        ..Record::default()
    };
    let mut put = |id: &str, ns: f64, count: Option<f64>| {
        record.results.insert(
            ("ready_512k".to_string(), id.to_string()),
            Measured {
                median_ns: Some(ns),
                instructions: count,
                allocs: Some(Allocs {
                    allocs: 2,
                    bytes: 20_800,
                    peak_bytes: 0,
                }),
                retained_bytes: None,
                virtual_ns: None,
            },
        );
    };
    put("pinfold", pinfold_ns, instructions);
    put("futures-buffered", 100.0, instructions.map(|_| 100.0));
    put("futures-util", 400.0, instructions.map(|_| 400.0));
    record
}

#[test]
fn a_record_reads_back_as_it_was_written() {
    let mut written = record("Zen 5", "2026-11-27", 28.0, Some(109.5));
    written.results.insert(
        ("burst_100k".to_string(), "pinfold".to_string()),
        Measured {
            median_ns: None,
            instructions: None,
            allocs: Some(Allocs {
                allocs: 30,
                bytes: 11 << 20,
                peak_bytes: 11 << 20,
            }),
            retained_bytes: Some(25_000),
            virtual_ns: Some(701_000_000),
        },
    );
    let read = Record::from_tsv(&written.slug, &written.to_tsv()).unwrap();
    assert_eq!(read, written);
    written.started = Some(1_796_000_000);
    let read = Record::from_tsv(&written.slug, &written.to_tsv()).unwrap();
    assert_eq!(read, written, "with the time its run started");
    assert!(Record::from_tsv("x", "# cpu\tA\nnot the columns\n").is_err());
}

#[test]
fn one_cpus_tables_show_times_instructions_and_both_ratios() {
    let zen5 = record("Zen 5", "2026-11-27", 28.0, Some(109.5));
    let sets = &TABLES[0];
    let table = cpu_table(&zen5, sets).unwrap();
    assert!(table.starts_with("### Sets of futures\n"));
    assert!(
        table.contains("| pinfold / futures-buffered: time, instructions |"),
        "{table}"
    );
    assert!(table.contains("| 0.28x, 1.09x | 0.07x, 0.27x |"), "{table}");
    // No column for a peer without a figure in the table's rows.
    assert!(!table.contains("futures-concurrency"), "{table}");
    // A table none of whose rows has a figure is left out.
    assert!(cpu_table(&zen5, &TABLES[1]).is_none());
}

#[test]
fn the_index_has_a_column_per_cpu_and_one_for_instructions() {
    let zen3 = record("Zen 3", "2026-11-20", 85.0, Some(120.0));
    let zen5 = record("Zen 5", "2026-11-27", 28.0, Some(109.5));
    let table = index_table(&[&zen3, &zen5], &TABLES[0]).unwrap();
    assert!(
        table.contains(
            "| workload | pinfold / futures-buffered, time on Zen 3 | pinfold / futures-buffered, \
             time on Zen 5 | pinfold / futures-buffered, instructions |"
        ),
        "{table}"
    );
    // Instructions from the newest record.
    assert!(table.contains("| 0.85x | 0.28x | 1.09x |"), "{table}");
}

#[test]
fn standings_and_claims_hold_on_every_cpu() {
    let zen3 = record("Zen 3", "2026-11-20", 110.0, None);
    let zen5 = record("Zen 5", "2026-11-27", 28.0, Some(90.0));
    let records = [&zen3, &zen5];
    let rows = standings(&records);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].times.len(), 2);
    assert_eq!(rows[0].worst(), 1.1);
    assert_eq!(rows[0].instruction_ratio(), Some(0.9));
    let peers = peer_rows(&records);
    let names: Vec<&str> = peers.iter().map(|(peer, _)| peer.as_str()).collect();
    assert_eq!(names, ["futures-buffered", "futures-util"]);
    let text = claims(&["Zen 3".to_string(), "Zen 5".to_string()], &peers);
    assert!(
        text.contains(
            "- **futures-buffered**: less time in 0 of 1; futures-buffered faster in `ready_512k`; \
         fewer instructions in 1 of 1."
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "- **futures-util**: less time in 1 of 1, never 5% slower; fewer instructions in 1 of 1."
        ),
        "{text}"
    );
}

#[test]
fn a_row_that_a_cpu_did_not_time_counts_on_the_cpus_that_did() {
    let zen3 = record("Zen 3", "2026-11-20", 90.0, None);
    let mut zen5 = record("Zen 5", "2026-11-27", 28.0, Some(90.0));
    let key = ("ready_512k".to_string(), "pinfold".to_string());
    zen5.results.get_mut(&key).unwrap().median_ns = None;
    let records = [&zen3, &zen5];
    let peers = peer_rows(&records);
    let (peer, rows) = &peers[0];
    assert_eq!(peer, "futures-buffered");
    assert_eq!(rows[0].times, [0.9], "Zen 3's ratio alone");
    assert_eq!(rows[0].instructions, Some(0.9), "the newest run's count");
    let text = claims(&["Zen 3".to_string(), "Zen 5".to_string()], &peers);
    assert!(
        text.contains(
            "- **futures-buffered**: less time in 1 of 1, never 5% slower; fewer instructions \
             in 1 of 1."
        ),
        "{text}"
    );
}

#[test]
fn claims_count_only_rows_where_every_cpu_that_timed_them_agrees() {
    let rows = vec![
        PeerRow {
            row: "both".to_string(),
            times: vec![0.5, 0.9],
            instructions: Some(0.8),
            bytes_per_value: None,
        },
        PeerRow {
            row: "split".to_string(),
            times: vec![0.5, 1.02],
            instructions: Some(1.2),
            bytes_per_value: None,
        },
    ];
    let text = claims(&["A".to_string()], &[("peer".to_string(), rows)]);
    assert!(
        text.contains(
            "- **peer**: less time in 1 of 2, never 5% slower; fewer instructions in 1 of 2."
        ),
        "{text}"
    );
}

/// The table titled `title`.
fn table(title: &str) -> &'static Table {
    TABLES
        .iter()
        .find(|table| table.title == title)
        .unwrap_or_else(|| panic!("no table `{title}`"))
}

/// The row named `name`, in any table.
fn workload(name: &str) -> &'static Workload {
    TABLES
        .iter()
        .flat_map(|table| table.workloads)
        .find(|workload| workload.name == name)
        .unwrap_or_else(|| panic!("no row `{name}`"))
}

/// Figures of `group/id` with only the allocations counted, peaking at `peak_bytes`.
fn allocated(peak_bytes: u64) -> Measured {
    Measured {
        allocs: Some(Allocs {
            allocs: 3,
            bytes: peak_bytes,
            peak_bytes,
        }),
        ..Measured::default()
    }
}

/// `record` with `ready_512k`'s peak bytes set: pinfold's, futures-buffered's and
/// futures-util's.
fn with_peaks(mut record: Record, [pinfold, buffered, util]: [u64; 3]) -> Record {
    for (id, peak) in [
        ("pinfold", pinfold),
        ("futures-buffered", buffered),
        ("futures-util", util),
    ] {
        let key = ("ready_512k".to_string(), id.to_string());
        let measured = record
            .results
            .get_mut(&key)
            .expect("the record has the row");
        measured.allocs = Some(Allocs {
            allocs: 2,
            bytes: peak,
            peak_bytes: peak,
        });
    }
    record
}

#[test]
fn a_rows_bytes_per_value_is_its_peak_over_the_values_it_holds() {
    let ready = workload("ready_512k");
    assert_eq!(ready.held, 256);
    assert_eq!(
        bytes_per_value(ready, Some(&allocated(20_800))),
        Some(81.25)
    );
    // Not counted, or a row that holds no fixed number of values: no figure.
    assert_eq!(bytes_per_value(ready, Some(&Measured::default())), None);
    assert_eq!(bytes_per_value(ready, None), None);
    let buffer = workload("ordered_10k_c50");
    assert_eq!(buffer.held, 0);
    assert_eq!(bytes_per_value(buffer, Some(&allocated(20_800))), None);
    // The builder keeps what `new` set.
    let row = Workload::new("row", 7, "what it does").holding(3);
    assert_eq!((row.name, row.items, row.held), ("row", 7, 3));
    assert_eq!(Workload::new("row", 7, "what it does").held, 0);
}

#[test]
fn one_cpus_tables_show_each_implementations_bytes_per_value() {
    let zen5 = with_peaks(
        record("Zen 5", "2026-11-27", 28.0, Some(109.5)),
        [20_480, 16_384, 45_056],
    );
    let text = cpu_table(&zen5, table("Sets of futures")).unwrap();
    assert!(
        text.contains(
            "| pinfold instructions | futures-buffered instructions | futures-util instructions \
             | pinfold bytes per value | futures-buffered bytes per value | futures-util bytes \
             per value | pinfold / futures-buffered: time, instructions |"
        ),
        "{text}"
    );
    // 20,480, 16,384 and 45,056 bytes over the 256 futures the set holds.
    assert!(
        text.contains("| 110 | 100 | 400 | 80.0 | 64.0 | 176.0 | 0.28x, 1.09x |"),
        "{text}"
    );
}

#[test]
fn a_row_that_holds_no_values_has_no_bytes_per_value() {
    let mut zen5 = Record {
        short: "Zen 5".to_string(),
        date: "2026-11-27".to_string(),
        ..Record::default()
    };
    for (group, peak) in [
        ("ordered_10k_c50", 90_000),
        ("unordered_selfwake_100k_c64", 6_400),
    ] {
        for id in ["pinfold", "futures-buffered"] {
            zen5.results
                .insert((group.to_string(), id.to_string()), allocated(peak));
        }
    }
    let buffers = table("Stream buffers");
    let text = cpu_table(&zen5, buffers).unwrap();
    assert!(
        text.contains("| futures-buffered bytes per value |"),
        "{text}"
    );
    let row = |name: &str| {
        text.lines()
            .find(|line| line.starts_with(&format!("| `{name}`")))
            .unwrap_or_else(|| panic!("no row {name}: {text}"))
            .to_string()
    };
    // Instructions, then bytes per value: none for the row that holds no fixed number.
    assert!(
        row("ordered_10k_c50").contains("| — | — | — | — | —, — |"),
        "{text}"
    );
    assert!(
        row("unordered_selfwake_100k_c64").contains("| — | — | 100.0 | 100.0 | —, — |"),
        "{text}"
    );
    let index = index_table(&[&zen5], buffers).unwrap();
    assert!(
        index.contains("| pinfold / futures-buffered, bytes per value |"),
        "{index}"
    );
    assert!(
        index
            .lines()
            .any(|line| line.starts_with("| `ordered_10k_c50`") && line.ends_with("| — | — | — |")),
        "{index}"
    );
    assert!(
        index
            .lines()
            .any(|line| line.starts_with("| `unordered_selfwake_100k_c64`")
                && line.ends_with("| — | — | 1.00x |")),
        "{index}"
    );
    // A table none of whose rows holds values has no such column.
    let mut pool = Record {
        short: "Zen 5".to_string(),
        ..Record::default()
    };
    pool.results.insert(
        ("pool_acquire_release".to_string(), "pinfold".to_string()),
        allocated(1_033),
    );
    let pools = table("Buffer pools: acquire and release");
    assert!(!cpu_table(&pool, pools).unwrap().contains("bytes per value"));
    assert!(
        !index_table(&[&pool], pools)
            .unwrap()
            .contains("bytes per value")
    );
}

#[test]
fn the_index_has_a_bytes_per_value_ratio_from_the_newest_record() {
    let zen3 = with_peaks(
        record("Zen 3", "2026-11-20", 85.0, Some(120.0)),
        [40_960, 16_384, 45_056],
    );
    let zen5 = with_peaks(
        record("Zen 5", "2026-11-27", 28.0, Some(109.5)),
        [20_480, 16_384, 45_056],
    );
    let text = index_table(&[&zen3, &zen5], table("Sets of futures")).unwrap();
    assert!(
        text.contains(
            "| pinfold / futures-buffered, instructions | pinfold / futures-buffered, bytes per \
             value | pinfold / futures-util, time on Zen 3 |"
        ),
        "{text}"
    );
    // 80.0 bytes per value over 64.0 and over 176.0, from the Zen 5 record (the newer).
    assert!(
        text.contains("| 0.85x | 0.28x | 1.09x | 1.25x | 0.21x | 0.07x | 0.27x | 0.45x |"),
        "{text}"
    );
}

#[test]
fn the_summary_gives_pinfolds_bytes_per_value_against_the_fewest() {
    let zen5 = with_peaks(
        record("Zen 5", "2026-11-27", 28.0, Some(109.5)),
        [20_480, 16_384, 45_056],
    );
    let rows = standings(&[&zen5]);
    assert_eq!(
        rows[0].bytes_per_value,
        Some((80.0, "futures-buffered".to_string(), 64.0))
    );
    let mut other = standing("join_all_std_ready_30", 2.0);
    other.instructions = Some((2.0, "vec".to_string(), 1.0));
    let chosen = [&rows[0], &other];
    let text = summary_table(&chosen, &["Zen 5".to_string()], "From a run.");
    assert!(
        text.contains("| workload | peer | time, Zen 5 | instructions | bytes per value |"),
        "{text}"
    );
    assert!(
        text.contains("| `ready_512k` | futures-buffered | 0.28x | 1.09x | 80.0 (1.25x) |"),
        "{text}"
    );
    // Tied at one ratio each, the row names the first peer; the other's cell names its own.
    assert!(
        text.contains("| `join_all_std_ready_30` | futures-util | 2.00x | 2.00x vec | — |"),
        "{text}"
    );
    let peers = peer_rows(&[&zen5]);
    let text = claims(&["Zen 5".to_string()], &peers);
    assert!(
        text.contains(
            "- **futures-buffered**: less time in 1 of 1, never 5% slower; fewer instructions \
             in 0 of 1; fewer bytes per value in 0 of 1."
        ),
        "{text}"
    );
    assert!(
        text.contains("; fewer instructions in 1 of 1; fewer bytes per value in 1 of 1."),
        "{text}"
    );
}

fn slugs(records: &[Record]) -> Vec<&str> {
    records.iter().map(|r| r.slug.as_str()).collect()
}

#[test]
fn records_go_by_day_then_by_when_their_runs_started_whatever_order_they_were_read_in() {
    let at = |mut record: Record, started: Option<u64>| {
        record.started = started;
        record
    };
    let mut records = vec![
        at(record("Zen 3", "2026-12-07", 50.0, None), Some(300)),
        at(record("Zen 4", "2026-12-06", 50.0, None), Some(900)),
        at(record("Zen 2", "2026-12-07", 50.0, None), Some(200)),
        at(record("Zen 1", "2026-12-07", 50.0, None), None),
        at(record("Zen 6", "2026-12-07", 50.0, None), None),
    ];
    let expected = [
        "amd-Zen 4",
        "amd-Zen 1",
        "amd-Zen 6",
        "amd-Zen 2",
        "amd-Zen 3",
    ];
    order_records(&mut records).unwrap();
    assert_eq!(slugs(&records), expected);
    records.reverse();
    order_records(&mut records).unwrap();
    assert_eq!(slugs(&records), expected, "read in another order");
    assert!(order_records(&mut []).unwrap_err().contains("no record"));
    // The newest of a day with no time: it cannot be told from the others of its day.
    let mut untimed = vec![
        at(record("Zen 3", "2026-12-07", 50.0, None), None),
        at(record("Zen 2", "2026-12-07", 50.0, None), None),
    ];
    let error = order_records(&mut untimed).unwrap_err();
    assert!(
        error.contains("amd-Zen 2") && error.contains("amd-Zen 3"),
        "{error}"
    );
    // Alone on its day, it is the newest.
    untimed[0].date = "2026-12-06".to_string();
    order_records(&mut untimed).unwrap();
}

#[test]
fn a_summary_rows_bytes_per_value_counts_toward_its_peer() {
    let mut row = standing("a", 0.5);
    row.instructions = Some((30.0, "futures-buffered".to_string(), 100.0));
    row.bytes_per_value = Some((48.0, "futures-buffered".to_string(), 96.0));
    assert_eq!(row_peer(&row), Some("futures-buffered"));
}

/// The records in `benches/results/`, in the order `bench-table` writes from them.
fn committed_records() -> Vec<Record> {
    let benches = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut records = read_records(&benches.join("results")).unwrap();
    order_records(&mut records).unwrap();
    records
}

/// The README's summary is what `bench-table --records` makes of the records in
/// `benches/results/`: a run that writes a record rewrites it, and nothing else may.
#[test]
fn the_readme_summary_is_what_the_committed_records_make() {
    let records = committed_records();
    let records: Vec<&Record> = records.iter().collect();
    let benches = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(benches.join("../README.md")).unwrap();
    let summary = readme_summary(&records);
    assert!(
        replace_summary(&readme, &summary).unwrap() == readme,
        "the README's summary differs from what the records make (run `cargo run -p \
         pinfold-benches --bin bench-table -- --records`); they make:\n{summary}"
    );
}

/// `benches/RESULTS.md` and `benches/ratios.svg` are what `bench-table --records` makes of the
/// records, as the README's summary is.
#[test]
fn the_index_and_the_chart_are_what_the_committed_records_make() {
    let records = committed_records();
    let records: Vec<&Record> = records.iter().collect();
    let benches = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for (file, made) in [
        ("RESULTS.md", index_document(&records)),
        ("ratios.svg", ratio_chart(&standings(&records))),
    ] {
        let committed = std::fs::read_to_string(benches.join(file)).unwrap();
        assert!(
            committed == made,
            "benches/{file} differs from what the records make (run `cargo run -p \
             pinfold-benches --bin bench-table -- --records`)"
        );
    }
}
