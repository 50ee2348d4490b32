//! `benches/ratios.svg`: a horizontal bar chart of pinfold's ratio to the fastest peer, per row
//! of the tables a bar for its time on each CPU recorded and one for its instructions per item
//! (against the peer that runs the fewest), on a log scale around a 1.0x line. Written by hand
//! as SVG text, so the report needs no plotting library.

use std::fmt::Write as _;

use crate::format;
use crate::summary::Standing;

/// The ratios the scale covers; a bar past either end is drawn to the end (its label gives
/// the ratio).
const LOWEST: f64 = 1.0 / 25.0;
const HIGHEST: f64 = 25.0;
/// The ratios marked on the scale.
const TICKS: [f64; 9] = [0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0];

const WIDTH: f64 = 1080.0;
/// Where the bars' area starts and ends: the rows' names to its left, the ratios to its right.
const PLOT_LEFT: f64 = 300.0;
const PLOT_RIGHT: f64 = 780.0;
const TOP: f64 = 52.0;
const ROW_HEIGHT: f64 = 14.0;
const BAR_HEIGHT: f64 = 12.0;
/// The space between two rows' bars.
const ROW_GAP: f64 = 6.0;
const FASTER: &str = "#2b8a3e";
const SLOWER: &str = "#c92a2a";

/// The x coordinate of `ratio`, clipped to the scale.
fn x(ratio: f64) -> f64 {
    let (low, high) = (LOWEST.ln(), HIGHEST.ln());
    let at = ratio.clamp(LOWEST, HIGHEST).ln();
    PLOT_LEFT + (at - low) / (high - low) * (PLOT_RIGHT - PLOT_LEFT)
}

/// `text` made safe inside an SVG element or attribute.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// One bar: its label (a CPU's short name, or `instructions`), the ratio and the peer.
struct Bar<'a> {
    series: &'a str,
    ratio: f64,
    peer: &'a str,
    /// A bar of instructions, drawn lighter.
    instructions: bool,
}

/// The bars of `row`: its time on each CPU, then its instructions.
fn bars(row: &Standing) -> Vec<Bar<'_>> {
    let mut bars: Vec<Bar<'_>> = row
        .times
        .iter()
        .map(|time| Bar {
            series: &time.cpu,
            ratio: time.ratio(),
            peer: &time.peer,
            instructions: false,
        })
        .collect();
    if let Some((ours, peer, theirs)) = &row.instructions {
        bars.push(Bar {
            series: "instructions",
            ratio: ours / theirs,
            peer,
            instructions: true,
        });
    }
    bars
}

/// The chart of `rows`, in their order, as an SVG document: one `<rect class="bar">` per bar
/// (per row, one per CPU that timed it and one for its instructions).
pub fn ratio_chart(rows: &[Standing]) -> String {
    let bar_count: usize = rows.iter().map(|row| bars(row).len().max(1)).sum();
    let height = TOP + ROW_HEIGHT * bar_count as f64 + ROW_GAP * rows.len() as f64 + 16.0;
    let one = x(1.0);
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="monospace" font-size="11">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="8" y="16" font-size="12">pinfold / the fastest peer: time on each CPU (solid), instructions per item (light); log scale, left of 1.0x pinfold is ahead</text>"#
    );
    let bottom = height - 12.0;
    for tick in TICKS {
        let at = x(tick);
        let (stroke, width) = if tick == 1.0 {
            ("#222", 1.5)
        } else {
            ("#ddd", 1.0)
        };
        let _ = writeln!(
            svg,
            r#"<line x1="{at:.1}" y1="{}" x2="{at:.1}" y2="{bottom}" stroke="{stroke}" stroke-width="{width}"/>"#,
            TOP - 10.0
        );
        let _ = writeln!(
            svg,
            r#"<text x="{at:.1}" y="{}" text-anchor="middle">{tick}x</text>"#,
            TOP - 14.0
        );
    }
    let mut y = TOP;
    for row in rows {
        let name = escape(&match row.name.split_once('/') {
            Some((group, id)) => format!("{group} ({id})"),
            None => row.name.clone(),
        });
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="{:.1}" text-anchor="end">{name}</text>"#,
            PLOT_LEFT - 8.0,
            y + BAR_HEIGHT - 2.0
        );
        for bar in bars(row) {
            let end = x(bar.ratio);
            let (left, width, fill) = if bar.ratio < 1.0 {
                (end, one - end, FASTER)
            } else {
                (one, end - one, SLOWER)
            };
            let opacity = if bar.instructions { 0.4 } else { 1.0 };
            let series = escape(bar.series);
            let peer = escape(bar.peer);
            let ratio = format::ratio(bar.ratio);
            let _ = writeln!(
                svg,
                r#"<rect class="bar" x="{left:.1}" y="{y:.1}" width="{:.1}" height="{BAR_HEIGHT}" fill="{fill}" fill-opacity="{opacity}"><title>{name}, {series}: {ratio} of {peer}</title></rect>"#,
                width.max(1.0),
            );
            let _ = writeln!(
                svg,
                r#"<text x="{}" y="{:.1}">{ratio} {peer} ({series})</text>"#,
                PLOT_RIGHT + 8.0,
                y + BAR_HEIGHT - 2.0,
            );
            y += ROW_HEIGHT;
        }
        y += ROW_GAP;
    }
    svg.push_str("</svg>\n");
    svg
}
