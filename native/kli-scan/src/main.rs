//! kli-scan: the first pass of kli's `search` and `ws_grep` in one native pass (issue 27).
//!
//! Usage (the working directory is the workspace root):
//!
//!     kli-scan --max-filesize N --sniff N [--max-entries N] [--name GLOB] [--skip-dir NAME]...
//!              --regexp PATTERN -- TOP
//!
//! It walks TOP the way `rg -uu` does (no ignore file of any kind, hidden files included,
//! no symlink followed; the `ignore` crate), never entering a folder named by `--skip-dir`
//! below TOP, and writes a record, `KIND\0PATH\0NUMBER\0`, for each regular file and symlink
//! whose name matches `--name` (a glob on the file name, the `globset` crate; every name
//! without it). PATH is relative to the working directory as the walk gave it (a leading "./"
//! dropped), its bytes as they are:
//!
//! - `L` the file is over `--max-filesize` bytes (NUMBER: its size); nothing is read;
//! - `B` a NUL byte lies in its first `--sniff` bytes (NUMBER: the first NUL's offset);
//!   only those bytes are read;
//! - `C` the file was read whole, holds no NUL byte, and NUMBER of its lines match PATTERN
//!   (rg's `--count`: matching lines, not matches).
//!
//! - `U` a regular file it did not settle (a NUL further on, or it could not be opened or
//!   read): the caller reads it itself;
//! - `S` a symlink (NUMBER 0), not followed: the caller decides where it leads;
//! - `V` (PATH empty), last: NUMBER entries the walk met below TOP, every kind and name.
//!
//! With `--max-entries N` the walk stops soon after meeting more than N entries (V then says
//! more than N, and the records cover only part of TOP: the caller's own walk stops at that
//! bound too, and uses none of them). The pattern is read by the
//! `grep-regex` crate as rg reads `--regexp` (line terminator `\n`, no encoding: the bytes as
//! they are). Exit status: 0 (done), 2 (bad arguments or a pattern the engine refuses: the
//! reason on stderr, one line).

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::exit;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use globset::Glob;
use ignore::{WalkBuilder, WalkState};

const SIZE_LIMIT: usize = 256 * 1024 * 1024; // as rgscan's --regex-size-limit / --dfa-size-limit
const FLUSH_AT: usize = 64 * 1024;

struct Args {
    max_bytes: u64,
    sniff: usize,
    max_entries: u64,
    name: Option<String>,
    skip_dirs: Vec<String>,
    pattern: String,
    top: String,
}

fn fail(why: &str) -> ! {
    eprintln!("kli-scan: {}", why);
    exit(2)
}

fn parse_args() -> Args {
    let mut it = std::env::args().skip(1);
    let (mut max_bytes, mut sniff, mut name, mut skip_dirs, mut pattern) =
        (None, None, None, Vec::new(), None);
    let mut max_entries = u64::MAX;
    let number = |v: Option<String>, flag: &str| -> u64 {
        v.and_then(|s| s.parse().ok()).unwrap_or_else(|| fail(&format!("{} needs a number", flag)))
    };
    loop {
        match it.next().as_deref() {
            Some("--max-filesize") => max_bytes = Some(number(it.next(), "--max-filesize")),
            Some("--sniff") => sniff = Some(number(it.next(), "--sniff") as usize),
            Some("--max-entries") => max_entries = number(it.next(), "--max-entries"),
            Some("--name") => name = Some(it.next().unwrap_or_else(|| fail("--name needs a glob"))),
            Some("--skip-dir") => skip_dirs.push(it.next().unwrap_or_else(|| fail("--skip-dir needs a name"))),
            Some("--regexp") => pattern = Some(it.next().unwrap_or_else(|| fail("--regexp needs a pattern"))),
            Some("--") => break,
            Some(other) => fail(&format!("unknown argument {:?}", other)),
            None => fail("missing -- TOP"),
        }
    }
    let top = it.next().unwrap_or_else(|| fail("missing TOP"));
    Args {
        max_bytes: max_bytes.unwrap_or_else(|| fail("missing --max-filesize")),
        sniff: sniff.unwrap_or_else(|| fail("missing --sniff")),
        max_entries,
        name,
        skip_dirs,
        pattern: pattern.unwrap_or_else(|| fail("missing --regexp")),
        top,
    }
}

/// Counts matching lines, as rg's `--count` does outside multi-line mode: one per match.
struct CountLines(u64);

impl Sink for CountLines {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, _: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.0 += 1;
        Ok(true)
    }
}

/// One walker thread's output, handed to the shared stdout in blocks.
struct Out {
    buf: Vec<u8>,
    shared: Arc<Mutex<io::BufWriter<io::Stdout>>>,
}

impl Out {
    fn record(&mut self, kind: u8, path: &Path, number: u64) {
        let mut bytes = path.as_os_str().as_bytes();
        if bytes.starts_with(b"./") {
            bytes = &bytes[2..];
        }
        self.buf.push(kind);
        self.buf.push(0);
        self.buf.extend_from_slice(bytes);
        self.buf.push(0);
        self.buf.extend_from_slice(number.to_string().as_bytes());
        self.buf.push(0);
        if self.buf.len() >= FLUSH_AT {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if !self.buf.is_empty() {
            let mut out = self.shared.lock().unwrap();
            if out.write_all(&self.buf).is_err() {
                exit(1); // the reader went away
            }
            self.buf.clear();
        }
    }
}

impl Drop for Out {
    fn drop(&mut self) {
        self.flush();
    }
}

fn open(path: &Path) -> io::Result<File> {
    // No symlink swapped in is followed, a FIFO swapped in cannot block the open.
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
}

/// Reads into `buf` until it holds `want` bytes or the file ends.
fn read_up_to(file: &mut File, buf: &mut Vec<u8>, want: usize) -> io::Result<()> {
    while buf.len() < want {
        let n = Read::take(&mut *file, (want - buf.len()) as u64).read_to_end(buf)?;
        if n == 0 {
            break;
        }
    }
    Ok(())
}

fn settle(path: &Path, args: &Args, matcher: &RegexMatcher, searcher: &mut Searcher,
          buf: &mut Vec<u8>, out: &mut Out) {
    let mut file = match open(path) {
        Ok(file) => file,
        Err(_) => return out.record(b'U', path, 0),
    };
    let meta = match file.metadata() {
        Ok(meta) => meta,
        Err(_) => return out.record(b'U', path, 0),
    };
    if !meta.is_file() {
        return out.record(b'U', path, 0); // swapped for something else since the walk met it
    }
    if meta.len() > args.max_bytes {
        out.record(b'L', path, meta.len());
        return;
    }
    buf.clear();
    if read_up_to(&mut file, buf, args.sniff).is_err() {
        return out.record(b'U', path, 0);
    }
    if let Some(at) = memchr::memchr(0, buf) {
        out.record(b'B', path, at as u64);
        return;
    }
    let head = buf.len();
    // Never more than the size limit, whatever the file grew to since the fstat.
    if read_up_to(&mut file, buf, args.max_bytes as usize + 1).is_err()
        || buf.len() as u64 > args.max_bytes
        || memchr::memchr(0, &buf[head..]).is_some()
    {
        return out.record(b'U', path, 0);
    }
    let mut count = CountLines(0);
    if searcher.search_slice(matcher, buf, &mut count).is_ok() {
        out.record(b'C', path, count.0);
    } else {
        out.record(b'U', path, 0);
    }
}

fn main() {
    let args = Arc::new(parse_args());
    let matcher = RegexMatcherBuilder::new()
        .line_terminator(Some(b'\n'))
        .size_limit(SIZE_LIMIT)
        .dfa_size_limit(SIZE_LIMIT)
        .build(&args.pattern)
        .unwrap_or_else(|e| fail(&e.to_string().replace('\n', " ")));
    let name = args.name.as_ref().map(|g| {
        Glob::new(g).unwrap_or_else(|e| fail(&e.to_string())).compile_matcher()
    });
    let skip_dirs: Vec<OsString> = args.skip_dirs.iter().map(OsString::from).collect();
    let visited = AtomicU64::new(0);
    let shared = Arc::new(Mutex::new(io::BufWriter::with_capacity(FLUSH_AT, io::stdout())));
    WalkBuilder::new(&args.top)
        .standard_filters(false)
        .follow_links(false)
        .build_parallel()
        .run(|| {
            let (args, matcher, name, skip_dirs, visited) =
                (Arc::clone(&args), matcher.clone(), &name, &skip_dirs, &visited);
            let mut searcher = SearcherBuilder::new()
                .binary_detection(BinaryDetection::none())
                .line_number(false)
                .build();
            let mut out = Out { buf: Vec::with_capacity(FLUSH_AT * 2), shared: Arc::clone(&shared) };
            let mut buf = Vec::new();
            Box::new(move |entry| {
                let entry = match entry {
                    Ok(entry) => entry,
                    Err(_) => return WalkState::Continue, // a folder it could not list
                };
                if entry.depth() == 0 {
                    return WalkState::Continue;
                }
                if visited.fetch_add(1, Ordering::Relaxed) >= args.max_entries {
                    return WalkState::Quit; // past the caller's bound: it walks itself
                }
                let kind = match entry.file_type() {
                    Some(kind) => kind,
                    None => return WalkState::Continue,
                };
                if kind.is_dir() {
                    return if skip_dirs.iter().any(|d| d.as_os_str() == entry.file_name()) {
                        WalkState::Skip
                    } else {
                        WalkState::Continue
                    };
                }
                if let Some(name) = name {
                    if !name.is_match(entry.file_name()) {
                        return WalkState::Continue;
                    }
                }
                if kind.is_file() {
                    settle(entry.path(), &args, &matcher, &mut searcher, &mut buf, &mut out);
                } else if kind.is_symlink() {
                    out.record(b'S', entry.path(), 0);
                }
                WalkState::Continue
            })
        });
    let mut out = shared.lock().unwrap();
    let total = visited.load(Ordering::Relaxed);
    if out.write_all(format!("V\0\0{}\0", total).as_bytes()).and_then(|_| out.flush()).is_err() {
        exit(1);
    }
}
