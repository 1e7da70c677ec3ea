//! Linting one file on several threads, results in file order.
//!
//! The calling thread checks the syntax and finds the tools (in the whole text, or in a file read
//! a block at a time); helper threads lint them a chunk at a time as they are found, each chunk
//! from a piece of the file read for it when the file is read in pieces. Once the scan is over,
//! the calling thread hands the results on in file order and, whenever the next one is not
//! ready, lints the next chunk itself instead of waiting. Waiting would cost a wake-up per chunk, and a thread that only waits is one more
//! thread taking turns on the cores.
//!
//! Each thread frees what it allocated: the results of a helper's chunk go back to it once they
//! are handed on. Freeing memory another thread allocated costs more under any allocator (glibc
//! takes that thread's arena lock, mimalloc, the command's, queues the block for its owner), and
//! with tens of thousands of findings glibc's two threads spent more time waiting for each
//! other's lock than the helper saved.

use super::context::RunCache;
use super::{FileJob, FileText, TextPiece, ToolOutcome, PIECE_MARGIN};
use crate::catalog::{
    read_piece, scan_stream, CatalogError, CatalogErrorKind, CatalogLayout, StreamScanError,
    ToolLocation,
};
use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// Tools linted at a time.
pub(super) const CHUNK: usize = 64;

/// How many linted chunks may wait to be handed on before the helpers take no more. When handing
/// on is the slower part (printing three findings for each of a million tiny tools), the results
/// of the whole file would otherwise pile up in memory.
pub(super) const AHEAD: usize = 32;

/// A linted chunk: its tools' outcomes and, when the file is read in pieces, the chunk's piece of
/// text (where it starts in the file, and the text), which its findings are handed on with.
#[derive(Default)]
struct Linted {
    outcomes: Vec<ToolOutcome>,
    piece: Option<(usize, String)>,
}

type ChunkResult = Result<Linted, CatalogError>;

/// What the threads share.
struct Shared {
    board: Mutex<Board>,
    /// Signalled when a chunk can be taken, and when the scan ends or the run stops.
    work: Condvar,
    /// Signalled when a helper posts a chunk's results or exits.
    posted: Condvar,
}

#[derive(Default)]
struct Board {
    /// The tools found so far, a chunk at a time, in file order. Shared, not copied: the calling
    /// thread made them and frees them at the end.
    chunks: Vec<Arc<Vec<ToolLocation>>>,
    /// Whether every tool has been found.
    scan_done: bool,
    /// Whether the helpers must stop (the calling thread is done, or the file has an error).
    stop: bool,
    /// The first chunk nobody has taken.
    next_chunk: usize,
    /// Linted chunks waiting to be handed on, with the helper that linted them (`None` for the
    /// calling thread).
    done: BTreeMap<usize, (Option<usize>, ChunkResult)>,
    /// Each helper's handed-on results, for it to free.
    returned: Vec<Vec<Linted>>,
    /// Helper threads still running.
    helpers: usize,
}

impl Board {
    /// Take the next chunk found, if there is one: its number and its tools.
    fn take(&mut self) -> Option<(usize, Arc<Vec<ToolLocation>>)> {
        let chunk = Arc::clone(self.chunks.get(self.next_chunk)?);
        self.next_chunk += 1;
        Some((self.next_chunk - 1, chunk))
    }
}

impl Shared {
    fn board(&self) -> MutexGuard<'_, Board> {
        // Nothing panics while holding the lock, so a poisoned board is still consistent.
        self.board.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Stops the helpers when the calling thread is done, however it ends (a result, an error, a
/// panic): none is left waiting for chunks that will not come.
struct StopHelpers<'a>(&'a Shared);

impl Drop for StopHelpers<'_> {
    fn drop(&mut self) {
        self.0.board().stop = true;
        self.0.work.notify_all();
    }
}

/// What the calling thread does next.
enum Next {
    /// Hand on the next chunk's results (made by this helper, or by the calling thread).
    HandOn(Option<usize>, ChunkResult),
    /// Lint this chunk.
    Lint(usize, Arc<Vec<ToolLocation>>),
}

/// Tells the calling thread when a helper exits, even by a panic (the scope re-raises it), so
/// that it never waits for a result that will not come.
struct HelperExit<'a>(&'a Shared);

impl Drop for HelperExit<'_> {
    fn drop(&mut self) {
        self.0.board().helpers -= 1;
        self.0.posted.notify_one();
    }
}

/// Lint a chunk's tools into `spare` (the buffers of a chunk before, emptied, or none: a chunk's
/// buffers are larger than the allocator's cache of small blocks).
fn lint_chunk(
    job: &FileJob<'_>,
    locations: &[ToolLocation],
    cache: &RunCache,
    spare: Linted,
) -> ChunkResult {
    let Linted {
        mut outcomes,
        piece,
    } = spare;
    outcomes.clear();
    outcomes.reserve(locations.len());
    let piece = match (job.text, locations.first(), locations.last()) {
        (FileText::Source(source), Some(first), Some(last)) => {
            let buffer = piece.map(|(_, text)| text.into_bytes()).unwrap_or_default();
            let range = first.range.start..last.range.end;
            Some(read_piece(source, range, PIECE_MARGIN, buffer).map_err(|e| read_error(job, e))?)
        }
        _ => None,
    };
    for location in locations {
        outcomes.push(job.lint_tool(text_of(&piece, job.text), location, cache)?);
    }
    Ok(Linted { outcomes, piece })
}

/// The text a chunk's tools are in: the piece read for it, or the whole text.
fn text_of<'a>(piece: &'a Option<(usize, String)>, text: FileText<'a>) -> TextPiece<'a> {
    match (piece, text) {
        (Some((start, text)), _) => TextPiece {
            start: *start,
            text,
        },
        (None, FileText::Whole(text)) => TextPiece::whole(text),
        // A chunk without tools: nothing was read.
        (None, FileText::Source(_)) => TextPiece::whole(""),
    }
}

/// Find the tools of the job's file, giving each to `found`: `Ok(false)` when the file, read in
/// pieces, must be linted as a whole text instead.
fn scan(job: &FileJob<'_>, found: &mut dyn FnMut(ToolLocation)) -> Result<bool, CatalogError> {
    match job.text {
        FileText::Whole(text) => CatalogLayout::scan_giving(job.file, text, found).map(|_| true),
        FileText::Source(source) => match scan_stream(source, job.block, found) {
            Ok(_) => Ok(true),
            Err(StreamScanError::NeedsWholeText) => Ok(false),
            Err(StreamScanError::Read(e)) => Err(read_error(job, e)),
        },
    }
}

/// A failure to read the job's file.
fn read_error(job: &FileJob<'_>, error: std::io::Error) -> CatalogError {
    CatalogError {
        file: job.file.to_string(),
        position: None,
        kind: CatalogErrorKind::Read(error.to_string()),
    }
}

/// Lint the file of `job` on the calling thread and `helpers` more, handing each tool's outcome
/// in file order (to change, not to keep), with the text it is in, to the function `begin`
/// returns when the scan is over, given the number of tools. Returns how many tools the file
/// holds, or `None` when the file, read in pieces, must be linted as a whole text instead.
///
/// Nothing is handed on unless the whole text is valid; after a tool that cannot be read,
/// nothing more is.
pub(super) fn lint_in_parallel<H>(
    job: &FileJob<'_>,
    helpers: usize,
    begin: impl FnOnce(usize) -> H,
) -> Result<Option<usize>, CatalogError>
where
    H: FnMut(&mut ToolOutcome, TextPiece<'_>),
{
    let shared = Shared {
        board: Mutex::new(Board {
            helpers,
            returned: (0..helpers).map(|_| Vec::new()).collect(),
            ..Board::default()
        }),
        work: Condvar::new(),
        posted: Condvar::new(),
    };
    std::thread::scope(|scope| {
        for helper in 0..helpers {
            let shared = &shared;
            scope.spawn(move || {
                let _exit = HelperExit(shared);
                let cache = RunCache::default();
                let mut spare = Linted::default();
                loop {
                    let mut board = shared.board();
                    let (chunk, locations) = loop {
                        if board.stop {
                            return;
                        }
                        if board.done.len() < AHEAD {
                            if let Some(taken) = board.take() {
                                break taken;
                            }
                            if board.scan_done {
                                return;
                            }
                        }
                        board = shared
                            .work
                            .wait(board)
                            .unwrap_or_else(PoisonError::into_inner);
                    };
                    drop(board);
                    let result = lint_chunk(job, &locations, &cache, std::mem::take(&mut spare));
                    let returned = {
                        let mut board = shared.board();
                        board.done.insert(chunk, (Some(helper), result));
                        std::mem::take(&mut board.returned[helper])
                    };
                    shared.posted.notify_one();
                    for linted in returned {
                        spare = linted;
                    }
                }
            });
        }

        let _stop_helpers = StopHelpers(&shared);
        // Find the tools, publishing them a chunk at a time.
        let mut pending: Vec<ToolLocation> = Vec::with_capacity(CHUNK);
        let mut tools = 0;
        let scanned = scan(job, &mut |location| {
            pending.push(location);
            tools += 1;
            if pending.len() == CHUNK {
                let chunk = std::mem::replace(&mut pending, Vec::with_capacity(CHUNK));
                shared.board().chunks.push(Arc::new(chunk));
                shared.work.notify_one();
            }
        });
        if !scanned? {
            return Ok(None);
        }
        {
            let mut board = shared.board();
            if !pending.is_empty() {
                board.chunks.push(Arc::new(pending));
            }
            board.scan_done = true;
        }
        shared.work.notify_all();

        // Hand the results on in order, linting here whenever the next one is not ready.
        let mut hand_on = begin(tools);
        let cache = RunCache::default();
        let mut spare = Linted::default();
        let chunks = tools.div_ceil(CHUNK);
        let mut wanted = 0;
        while wanted < chunks {
            let next = {
                let mut board = shared.board();
                if let Some((helper, result)) = board.done.remove(&wanted) {
                    if board.done.len() + 1 == AHEAD {
                        // A helper may be waiting for room.
                        shared.work.notify_one();
                    }
                    Next::HandOn(helper, result)
                } else if let Some((chunk, locations)) = board.take() {
                    Next::Lint(chunk, locations)
                } else if board.helpers == 0 {
                    // A helper panicked with the chunk: the scope re-raises its panic.
                    break;
                } else {
                    drop(shared.posted.wait(board));
                    continue;
                }
            };
            let (helper, result) = match next {
                Next::HandOn(helper, result) => (helper, result),
                Next::Lint(chunk, locations) => {
                    let result = lint_chunk(job, &locations, &cache, std::mem::take(&mut spare));
                    if chunk != wanted {
                        shared.board().done.insert(chunk, (None, result));
                        continue;
                    }
                    (None, result)
                }
            };
            let mut linted = result?;
            let piece = text_of(&linted.piece, job.text);
            for outcome in &mut linted.outcomes {
                hand_on(outcome, piece);
            }
            match helper {
                Some(helper) => shared.board().returned[helper].push(linted),
                None => spare = linted,
            }
            wanted += 1;
        }
        Ok(Some(tools))
    })
}
