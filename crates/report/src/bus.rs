//! The terminal's account of a bus step: what was published and delivered, how fast,
//! how late, and what went missing.

use result::words::count;
use result::Bus;

fn ms(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| format!("{v}"))
}

/// The lines, in order, that head a bus step's verdict.
pub fn lines(b: &Bus) -> Vec<String> {
    let who = if b.mode == "queue" {
        format!("{} of a queue", count(b.subscribers as u64, "consumer"))
    } else {
        count(b.subscribers as u64, "subscriber")
    };
    let mut out = vec![
        format!(
            "bus ({}, {}): {} → {who} — {} published at {} msg/s; {} of {} deliveries made at {} msg/s",
            b.mode, b.transport, count(b.publishers as u64, "publisher"), b.published, b.publish_per_s, b.delivered, b.expected, b.deliver_per_s
        ),
        format!(
            "  delivery latency p50/p99/max {} / {} / {} ms; first message p50/max {} / {} ms after the first publish",
            ms(b.p50_delivery_ms),
            ms(b.p99_delivery_ms),
            ms(b.max_delivery_ms),
            ms(b.p50_first_message_ms),
            ms(b.max_first_message_ms)
        ),
    ];
    let mut wrong = vec![
        format!("{} lost", b.lost),
        format!("{} duplicated", b.duplicated),
    ];
    wrong.push(format!(
        "{} out of order{}",
        b.out_of_order,
        if b.ordered {
            ""
        } else {
            " (order not promised)"
        }
    ));
    let mut tail = String::new();
    if b.mode == "fanout" && b.subscribers_with_loss > 0 {
        tail = format!(
            "; {} of {} subscribers missed messages",
            b.subscribers_with_loss, b.subscribers
        );
    }
    if let Some(f) = b.fairness {
        tail.push_str(&format!(
            "; fairness {f} (the fewest messages a consumer got over the most)"
        ));
    }
    out.push(format!("  {}{tail}", wrong.join(", ")));
    out
}
