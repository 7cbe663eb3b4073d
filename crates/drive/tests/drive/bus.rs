//! The bus's account with known answers: stamps found inside whatever frames carry them,
//! and lost, duplicated, out-of-order and fairness counted from what subscribers saw.

use drive::bus::tally::{account, scan, stamp, Run, Seen, Stamp};
use drive::spec::BusSpec;
use hdrhistogram::Histogram;

const TAG: u32 = 0x1a2b3c4d;

fn saw(msgs: &[(u32, u32)]) -> Seen {
    let mut s = Seen::default();
    for (i, &(p, q)) in msgs.iter().enumerate() {
        s.take(
            Stamp {
                publisher: p,
                seq: q,
                sent_us: 1000,
            },
            2000 + i as u64,
        );
    }
    s
}

fn run<'a>(queue: bool, published: &'a [u64], seen: &'a [Seen], h: &'a Histogram<u64>) -> Run<'a> {
    Run {
        queue,
        ordered: true,
        transport: "tcp",
        published,
        seen,
        delivery_us: h,
        first_publish_us: Some(1000),
        last_publish_us: Some(1_001_000),
        last_delivery_us: Some(2_001_000),
    }
}

#[test]
fn stamps_are_found_inside_resp_json_and_stomp_and_others_runs_are_not() {
    let s = stamp(TAG, 3, 17, 123456);
    assert_eq!(s, "pst.1a2b3c4d.3.17.123456");
    let resp = format!(
        "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n${}\r\n{s}\r\n",
        s.len()
    );
    let json = format!("{{\"data\":\"{s}\",\"also\":\"{}\"}}", stamp(TAG, 0, 1, 9));
    let other = stamp(0xdeadbeef, 3, 17, 1);
    let want = Stamp {
        publisher: 3,
        seq: 17,
        sent_us: 123456,
    };
    assert_eq!(scan(resp.as_bytes(), TAG), vec![want]);
    assert_eq!(scan(json.as_bytes(), TAG).len(), 2);
    assert_eq!(
        scan(format!("MESSAGE\n\n{s}\0").as_bytes(), TAG),
        vec![want]
    );
    assert!(scan(other.as_bytes(), TAG).is_empty());
    assert!(
        scan(b"pst.1a2b3c4d.3.x.1", TAG).is_empty(),
        "a broken stamp is not one"
    );
}

#[test]
fn fanout_counts_lost_duplicated_and_out_of_order_per_subscriber() {
    let h = Histogram::new(3).unwrap();
    let whole = saw(&[(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]);
    let gaps = saw(&[(0, 0), (0, 2), (1, 0), (1, 0), (1, 2), (1, 1)]);
    let b = account(&run(false, &[3, 3], &[whole, gaps], &h));
    assert_eq!((b.published, b.expected, b.delivered), (6, 12, 11));
    assert_eq!((b.lost, b.duplicated, b.out_of_order), (1, 1, 1));
    assert_eq!(b.subscribers_with_loss, 1);
    assert_eq!(b.violations(), 3);
    assert_eq!(b.publish_per_s, 6.0);
    assert_eq!(b.deliver_per_s, 5.5);
    assert_eq!(b.fairness, None);
}

#[test]
fn a_stamp_past_what_was_published_is_not_counted() {
    let h = Histogram::new(3).unwrap();
    let b = account(&run(
        false,
        &[2],
        &[saw(&[(0, 0), (0, 1), (0, 7), (4, 0)])],
        &h,
    ));
    assert_eq!((b.delivered, b.lost), (2, 0));
}

#[test]
fn a_queue_counts_over_all_consumers_and_reports_fairness() {
    let h = Histogram::new(3).unwrap();
    let a = saw(&[(0, 0), (0, 2), (0, 4), (0, 6)]);
    let b = saw(&[(0, 1), (0, 3)]);
    let dup = saw(&[(0, 5), (0, 6)]);
    let q = account(&run(true, &[8], &[a, b, dup], &h));
    assert_eq!((q.published, q.expected, q.delivered), (8, 8, 7));
    assert_eq!((q.lost, q.duplicated), (1, 1), "7 lost, 6 twice");
    assert_eq!(q.fairness, Some(0.5));
    assert_eq!(q.subscribers_with_loss, 1);
}

#[test]
fn first_message_latency_is_from_the_first_publish() {
    let h = Histogram::new(3).unwrap();
    let b = account(&run(false, &[2], &[saw(&[(0, 0), (0, 1)])], &h));
    // saw() delivers its first message at 2000 µs; the first publish was at 1000.
    assert_eq!(b.max_first_message_ms, Some(1.0));
}

fn err(text: &str) -> String {
    BusSpec::parse(text, "s.toml").unwrap_err().to_string()
}

#[test]
fn a_wrong_bus_file_names_its_line_and_the_fix() {
    let base = "transport = \"tcp\"\n[[role]]\nkind = \"subscriber\"\ncount = 2\n";
    let e = err(&format!(
        "{base}[[role]]\nkind = \"publisher\"\ncount = 1\nsend = \"PUB x\"\n"
    ));
    assert!(e.starts_with("s.toml:8:") && e.contains("{{stamp}}"), "{e}");
    let e = err(base);
    assert!(e.contains("kind = \"publisher\""), "{e}");
    let e = err("transport = \"udp\"\n[[role]]\nkind = \"subscriber\"\ncount = 1\n");
    assert!(
        e.starts_with("s.toml:1:") && e.contains("\"tcp\" or \"unix\" or \"ws\""),
        "{e}"
    );
    let e = err(&format!(
        "{base}[[role]]\nkind = \"publisher\"\nsend = \"P {{{{stamp}}}}\"\n"
    ));
    assert!(e.contains("count = N") && e.contains("share"), "{e}");
    let e = err(&format!(
        "{base}[[role]]\nkind = \"publisher\"\ncount = 1\nsend = \"P {{{{stamp}}}} {{{{who}}}}\"\n"
    ));
    assert!(e.contains("{{who}}") && e.contains("{{pad N}}"), "{e}");
    let ok = BusSpec::parse(
        &format!("{base}[[role]]\nkind = \"publisher\"\nshare = 0.1\nsend = \"P {{{{stamp}}}} {{{{pad 64}}}}\"\n"),
        "s.toml",
    )
    .unwrap();
    assert_eq!(ok.counts(100), vec![2, 10]);
    assert_eq!(
        ok.counts(1),
        vec![2, 1],
        "a share is at least one connection"
    );
}

#[test]
fn pad_is_filler_of_a_chosen_size_and_a_sweep_moves_it() {
    assert_eq!(drive::template::fill("a{{pad 3}}b", &[]).unwrap(), "axxxb");
    assert!(
        drive::template::fill("{{padding}}", &[]).is_err(),
        "only `pad N`"
    );
    let mut s = drive::SessionSpec::parse(
        "url = \"{{base}}/turn\"\nbody = '{\"m\": \"{{session}} {{pad 10}}\"}'\n",
        "s.toml",
    )
    .unwrap();
    s.set("pad", 4096.0).unwrap();
    assert!(
        s.turn[0].bodies[0].contains("{{pad 4096}}"),
        "{:?}",
        s.turn[0].bodies
    );
    assert!(s.set("messages", 5.0).unwrap_err().contains("bus"));
    assert!(s.set("turnz", 5.0).unwrap_err().contains("not an axis"));
    s.set("turns", 7.0).unwrap();
    assert_eq!(s.turns, 7);
    let mut plain = drive::SessionSpec::parse("url = \"{{base}}/turn\"\n", "s.toml").unwrap();
    assert!(plain
        .set("pad", 10.0)
        .unwrap_err()
        .contains("no request body"));
}
