//! The terminal's account of a bus step: what was published and delivered, how fast,
//! how late, and what went missing.

use result::Bus;

fn ms(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| format!("{v}"))
}

/// The lines, in order, that head a bus step's verdict.
pub fn lines(b: &Bus) -> Vec<String> {
    let who = if b.mode == "queue" {
        format!("{} consumer(s) of a queue", b.subscribers)
    } else {
        format!("{} subscriber(s)", b.subscribers)
    };
    let mut out = vec![
        format!(
            "bus ({}, {}): {} publisher(s) → {who} — {} published at {} msg/s; {} of {} deliveries made at {} msg/s",
            b.mode, b.transport, b.publishers, b.published, b.publish_per_s, b.delivered, b.expected, b.deliver_per_s
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
