//! `benches/ratios.svg`: a horizontal bar chart of pinfold's ratio to the fastest peer, one bar
//! per row of the tables, on a log scale around a 1.0x line. Written by hand as SVG text, so
//! the report needs no plotting library.

use std::fmt::Write as _;

use crate::format;
use crate::summary::Standing;

/// The ratios the scale covers; a bar past either end is drawn to the end (its label gives
/// the ratio).
const LOWEST: f64 = 1.0 / 25.0;
const HIGHEST: f64 = 25.0;
/// The ratios marked on the scale.
const TICKS: [f64; 9] = [0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0];

const WIDTH: f64 = 980.0;
/// Where the bars' area starts and ends: the rows' names to its left, the ratios to its right.
const PLOT_LEFT: f64 = 300.0;
const PLOT_RIGHT: f64 = 780.0;
const TOP: f64 = 52.0;
const ROW_HEIGHT: f64 = 18.0;
const BAR_HEIGHT: f64 = 12.0;
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

/// The chart of `rows`, in their order, as an SVG document: one `<rect class="bar">` per row.
pub fn ratio_chart(rows: &[Standing]) -> String {
    let height = TOP + ROW_HEIGHT * rows.len() as f64 + 16.0;
    let one = x(1.0);
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="monospace" font-size="11">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="{PLOT_LEFT}" y="16" font-size="12">pinfold's median / the fastest peer's (log scale; left of 1.0x pinfold is faster)</text>"#
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
    for (i, row) in rows.iter().enumerate() {
        let y = TOP + ROW_HEIGHT * i as f64;
        let ratio = row.ratio();
        let end = x(ratio);
        let (left, width, fill) = if ratio < 1.0 {
            (end, one - end, FASTER)
        } else {
            (one, end - one, SLOWER)
        };
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
        let _ = writeln!(
            svg,
            r#"<rect class="bar" x="{left:.1}" y="{y:.1}" width="{:.1}" height="{BAR_HEIGHT}" fill="{fill}"><title>{name}: {} of {}</title></rect>"#,
            width.max(1.0),
            format::ratio(ratio),
            escape(&row.peer)
        );
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="{:.1}">{} {}</text>"#,
            PLOT_RIGHT + 8.0,
            y + BAR_HEIGHT - 2.0,
            format::ratio(ratio),
            escape(&row.peer)
        );
    }
    svg.push_str("</svg>\n");
    svg
}
