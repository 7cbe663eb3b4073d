//! Whose reply a caller heard, and the replies the mock spoke lately (for a reply compared
//! by its sound): the words check's ledger. In process, the mock's own; from shards, which
//! share one mock but not its ledger in memory, asked of it (`POST /plimsoll/owner`,
//! `POST /plimsoll/spoken`). A reply heard on another shard's call is named all the same.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;

/// The in-process mock's ledger as the words check's.
pub(crate) fn of_app(app: &Arc<mock::App>) -> drive::call::Owner {
    let (a, b) = (app.clone(), app.clone());
    drive::call::Owner::new(
        Arc::new(move |t: &str| a.ledger.owner_of_spoken(t).as_deref().map(call)),
        Some(Arc::new(move |since, until, most| {
            let list = b.ledger.aloud.between(since, until, most);
            list.into_iter().map(|(o, t)| (call(&o), t)).collect()
        })),
    )
}

/// How long a question may take, connecting, sending or reading.
const WAIT: Duration = Duration::from_secs(5);

/// The shared mock at `base` (`http://host:port`) as the words check's ledger; None, said
/// once, for a URL it cannot ask over plain HTTP (the calls' words then go unchecked).
pub(crate) fn of_mock(base: &str) -> Option<drive::call::Owner> {
    let Some(addr) = base
        .strip_prefix("http://")
        .map(|a| a.trim_end_matches('/').to_string())
        .filter(|a| !a.contains('/'))
    else {
        eprintln!("--mock {base}: not http://HOST:PORT, so the calls' words are not checked (a reply heard on the wrong call goes unnamed)");
        return None;
    };
    let lines = Arc::new(Lines::default());
    // Asked on the voice's low-priority threads as each reply is read, never on the
    // driver's runtime; each path's failure said once.
    let ask = move |path: &str, body: &str, said: &Once| match lines.ask(&addr, path, body) {
        Ok(v) => Some(v),
        Err(why) => {
            said.call_once(|| {
                let what = match path {
                    "/plimsoll/owner" => "whose reply a caller heard (those words count as unheard)",
                    _ => "which replies it spoke (a reply whose words cannot be read is not compared by its sound)",
                };
                eprintln!("the shared mock at {addr} could not say {what}: {why}");
            });
            None
        }
    };
    let ask = Arc::new(ask);
    let (list, said_who, said_list) = (ask.clone(), Once::new(), Once::new());
    let who = Arc::new(move |text: &str| {
        let v = ask("/plimsoll/owner", text, &said_who)?;
        v["owner"].as_str().map(call)
    });
    // A mock that refused the list once (an older one) is not asked again.
    let refused = std::sync::atomic::AtomicBool::new(false);
    let spoken = Arc::new(move |since: Duration, until: Duration, most: usize| {
        use std::sync::atomic::Ordering::Relaxed;
        if refused.load(Relaxed) {
            return Vec::new();
        }
        let body = format!("{} {} {most}", since.as_millis(), until.as_millis());
        let v = list("/plimsoll/spoken", &body, &said_list);
        refused.store(v.is_none(), Relaxed);
        let pairs = v.as_ref().and_then(|v| v["spoken"].as_array().cloned());
        pairs
            .into_iter()
            .flatten()
            .filter_map(|p| {
                let texts = p[1]
                    .as_array()?
                    .iter()
                    .filter_map(|t| t.as_str().map(String::from));
                Some((call(p[0].as_str()?), texts.collect()))
            })
            .collect()
    });
    Some(drive::call::Owner::new(who, Some(spoken)))
}

/// The mock's anonymous session is the drive's "no call's".
fn call(owner: &str) -> String {
    match owner == mock::session::ANONYMOUS {
        true => drive::call::NO_CALL.to_string(),
        false => owner.to_string(),
    }
}

/// Connections to the mock kept open between questions (HTTP/1.1 keep-alive): a question
/// takes one that is idle or opens one, and gives it back once answered. A shard asks once
/// per reply heard; a connection each was a socket in TIME_WAIT each.
#[derive(Default)]
struct Lines(Mutex<Vec<BufReader<TcpStream>>>);

impl Lines {
    /// The mock's answer to `body` posted to `path`, asked on an idle connection; asked
    /// again on a new one only when the idle one is broken (the mock may have closed it),
    /// not when the mock answered with a refusal.
    fn ask(&self, addr: &str, path: &str, body: &str) -> Result<serde_json::Value, String> {
        let idle = self.0.lock().map(|mut v| v.pop()).unwrap_or(None);
        if let Some(mut line) = idle {
            match ask_on(&mut line, addr, path, body) {
                Ok(v) => return Ok(self.keep(line, v)),
                Err(Failed::Refused(why)) => return Err(why),
                Err(Failed::Broken(_)) => {}
            }
        }
        let mut line = BufReader::new(connect(addr)?);
        let v = ask_on(&mut line, addr, path, body).map_err(Failed::why)?;
        Ok(self.keep(line, v))
    }

    /// `line` back among the idle ones, and what it answered.
    fn keep(&self, line: BufReader<TcpStream>, v: serde_json::Value) -> serde_json::Value {
        if let Ok(mut idle) = self.0.lock() {
            idle.push(line);
        }
        v
    }
}

/// Why a question got no owner: the connection broke (closed, too slow), or the mock
/// answered but not with an owner (an error status, an older mock, a body it cannot read).
enum Failed {
    Broken(String),
    Refused(String),
}

impl Failed {
    fn why(self) -> String {
        match self {
            Failed::Broken(why) | Failed::Refused(why) => why,
        }
    }
}

fn connect(addr: &str) -> Result<TcpStream, String> {
    let to = addr
        .to_socket_addrs()
        .map_err(|e| e.to_string())?
        .next()
        .ok_or("no address")?;
    let s = TcpStream::connect_timeout(&to, WAIT).map_err(|e| e.to_string())?;
    let _ = (
        s.set_read_timeout(Some(WAIT)),
        s.set_write_timeout(Some(WAIT)),
        s.set_nodelay(true),
    );
    Ok(s)
}

/// One question on an open connection: the mock's JSON answer; an error when it cannot be
/// asked (too slow, closed) or the mock refused it (an older mock).
fn ask_on(
    line: &mut BufReader<TcpStream>,
    addr: &str,
    path: &str,
    body: &str,
) -> Result<serde_json::Value, Failed> {
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let s = line.get_mut();
    s.write_all(head.as_bytes())
        .and_then(|_| s.write_all(body.as_bytes()))
        .map_err(|e| Failed::Broken(e.to_string()))?;
    let (status, answer) = read_answer(line).map_err(Failed::Broken)?;
    if !status.starts_with("HTTP/1.1 200") {
        return Err(Failed::Refused(format!(
            "{status}: a `plimsoll mock` of this version answers POST {path}"
        )));
    }
    serde_json::from_slice(&answer).map_err(|e| Failed::Refused(e.to_string()))
}

/// An HTTP/1.1 answer's status line and its body (by its Content-Length).
fn read_answer(line: &mut BufReader<TcpStream>) -> Result<(String, Vec<u8>), String> {
    let mut status = String::new();
    line.read_line(&mut status).map_err(|e| e.to_string())?;
    if status.is_empty() {
        return Err("the connection closed".into());
    }
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        line.read_line(&mut header).map_err(|e| e.to_string())?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().map_err(|_| "a bad Content-Length")?;
            }
        }
    }
    let mut body = vec![0; length];
    line.read_exact(&mut body).map_err(|e| e.to_string())?;
    Ok((status.trim_end().to_string(), body))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mock that cannot be reached is an error said once, not a hang: the port of a
    /// listener already closed answers nothing.
    #[test]
    fn an_unreachable_mock_is_an_error_not_a_wait() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let t0 = std::time::Instant::now();
        assert!(Lines::default()
            .ask(&format!("127.0.0.1:{port}"), "/plimsoll/owner", "hello")
            .is_err());
        assert!(t0.elapsed() < WAIT * 2);
        assert!(of_mock("https://mock:8700").is_none());
        assert!(of_mock("http://127.0.0.1:8700").is_some());
    }

    /// A mock of two questions a connection: the second question goes on the first's
    /// connection, the third finds it closed and asks again on a new one.
    #[test]
    fn questions_share_a_connection_and_one_closed_is_opened_again() {
        use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                count.fetch_add(1, SeqCst);
                let mut line = BufReader::new(conn.unwrap());
                for _ in 0..2 {
                    answer_one(&mut line);
                }
            }
        });
        let lines = Lines::default();
        for text in ["a", "b", "c"] {
            let v = lines.ask(&addr, "/plimsoll/owner", text).unwrap();
            assert_eq!(v["owner"], format!("s-{text}"));
        }
        assert_eq!(accepted.load(SeqCst), 2);
    }

    /// A shard's caller lists the shared mock's replies spoken lately, to compare a reply
    /// it cannot read with them by its sound; the anonymous session's are no call's.
    #[test]
    fn the_replies_spoken_lately_are_listed_with_whose_each_was() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                answer_one(&mut BufReader::new(conn.unwrap()));
            }
        });
        let owner = of_mock(&format!("http://{addr}")).unwrap();
        let list = owner.spoken_lately(Duration::from_secs(5), Duration::ZERO, 8);
        let want = [("s1", "hello"), (drive::call::NO_CALL, "hi")];
        let want: Vec<(String, Vec<String>)> = want.map(|(o, t)| (o.into(), vec![t.into()])).into();
        assert_eq!(list, want);
        assert_eq!((owner.who)("x").as_deref(), Some("s-x"));
    }

    /// One request read and answered as the mock would: the owner is "s-" and the text;
    /// the replies spoken, one of a call's and one of the anonymous session's.
    fn answer_one(line: &mut BufReader<TcpStream>) {
        let (mut length, mut first) = (0, String::new());
        loop {
            let mut h = String::new();
            line.read_line(&mut h).unwrap();
            if h.trim_end().is_empty() {
                break;
            }
            if first.is_empty() {
                first = h.clone();
            }
            if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut text = vec![0; length];
        line.read_exact(&mut text).unwrap();
        let body = match first.starts_with("POST /plimsoll/spoken ") {
            true => r#"{"spoken":[["s1",["hello"]],["-",["hi"]]]}"#.to_string(),
            false => format!("{{\"owner\":\"s-{}\"}}", String::from_utf8(text).unwrap()),
        };
        let out = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        line.get_mut().write_all(out.as_bytes()).unwrap();
    }
}
