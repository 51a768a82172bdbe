//! The workload's flow drawn as boxes: the source, each operator and the
//! sink, joined by arrows.

use std::fmt::Write;

use super::text::{escape, CHAR_W};

/// One box of a flow: a title and a detail line.
pub struct FlowBox {
    pub title: String,
    pub detail: String,
}

/// source topic -> operators -> sink, `edge_label` (the delivery modes) on the
/// edge into the sink, and the probe reading the sink.
pub fn flow(source: &FlowBox, operators: &[FlowBox], sink: &FlowBox, edge_label: &str) -> String {
    let width_of = |b: &FlowBox| {
        (b.title.chars().count().max(b.detail.chars().count()) as f64 * CHAR_W + 24.0).max(90.0)
    };
    let gap = |i: usize, last: usize| {
        if i == last {
            (edge_label.chars().count() as f64 * CHAR_W + 30.0).max(60.0)
        } else {
            40.0
        }
    };
    let boxes: Vec<(&FlowBox, bool)> = std::iter::once((source, true))
        .chain(operators.iter().map(|b| (b, false)))
        .chain(std::iter::once((sink, true)))
        .collect();
    let (y, h) = (20.0, 44.0);
    let mut x = 10.0;
    let mut body = String::new();
    let last = boxes.len() - 1;
    let mut sink_centre = 0.0;
    for (i, (b, topic)) in boxes.iter().enumerate() {
        let w = width_of(b);
        let class = if *topic { "topic" } else { "op" };
        let rx = if *topic { 16 } else { 4 };
        let _ = write!(
            body,
            r#"<rect class="{class}" x="{x:.1}" y="{y}" width="{w:.1}" height="{h}" rx="{rx}"/><text x="{cx:.1}" y="{ty}" text-anchor="middle" font-weight="bold">{}</text><text x="{cx:.1}" y="{dy}" text-anchor="middle">{}</text>"#,
            escape(&b.title),
            escape(&b.detail),
            cx = x + w / 2.0,
            ty = y + 18.0,
            dy = y + 34.0,
        );
        if i == last {
            sink_centre = x + w / 2.0;
        }
        x += w;
        if i < last {
            let g = gap(i + 1, last);
            let _ = write!(
                body,
                r#"<line class="edge" x1="{x:.1}" y1="{my}" x2="{x2:.1}" y2="{my}" marker-end="url(#arrow)"/>"#,
                my = y + h / 2.0,
                x2 = x + g - 2.0,
            );
            if i + 1 == last && !edge_label.is_empty() {
                let _ = write!(
                    body,
                    r#"<text class="edge-label" x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
                    x + g / 2.0,
                    y + h / 2.0 - 6.0,
                    escape(edge_label)
                );
            }
            x += g;
        }
    }
    let probe_y = y + h + 36.0;
    let probe = "latency probe: arrival − timestamp";
    let probe_w = probe.chars().count() as f64 * CHAR_W + 24.0;
    let _ = write!(
        body,
        r#"<line class="edge dashed" x1="{sink_centre:.1}" y1="{}" x2="{sink_centre:.1}" y2="{}" marker-end="url(#arrow)"/><rect class="probe" x="{:.1}" y="{probe_y}" width="{probe_w:.1}" height="36" rx="4"/><text x="{sink_centre:.1}" y="{}" text-anchor="middle">{probe}</text>"#,
        y + h,
        probe_y - 2.0,
        sink_centre - probe_w / 2.0,
        probe_y + 22.0,
    );
    let width = (x + 10.0).max(sink_centre + probe_w / 2.0 + 10.0);
    format!(
        r##"<svg class="flow" xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" role="img" aria-label="workload flow"><defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>{body}</svg>"##,
        height = probe_y + 46.0,
    )
}
