//! What the heap holds, apart from what the process's pages hold: a global allocator over
//! the system's (glibc malloc) that counts the bytes asked for and the bytes of the chunks
//! malloc gave out, and `malloc_trim`, which hands free pages back to the kernel as Go's
//! `debug.FreeOSMemory` does. The only `unsafe` of the workspace: this crate is a measuring
//! tool and is never shipped.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, Ordering};

/// The system allocator, counted.
pub struct Counting;

static REQUESTED: AtomicI64 = AtomicI64::new(0);
static CHUNKS: AtomicI64 = AtomicI64::new(0);
static LIVE: AtomicI64 = AtomicI64::new(0);

/// The bytes malloc set aside for an allocation at `ptr`: its usable size plus the chunk
/// header glibc keeps before it.
fn chunk(ptr: *mut u8) -> i64 {
    // SAFETY: `ptr` was returned by the system allocator (malloc, posix_memalign or
    // realloc) and is not freed yet.
    let usable = unsafe { libc::malloc_usable_size(ptr.cast()) };
    usable as i64 + size_of::<usize>() as i64
}

fn counted(ptr: *mut u8, size: usize) {
    if !ptr.is_null() {
        REQUESTED.fetch_add(size as i64, Ordering::Relaxed);
        CHUNKS.fetch_add(chunk(ptr), Ordering::Relaxed);
        LIVE.fetch_add(1, Ordering::Relaxed);
    }
}

fn uncounted(ptr: *mut u8, size: usize) {
    REQUESTED.fetch_sub(size as i64, Ordering::Relaxed);
    CHUNKS.fetch_sub(chunk(ptr), Ordering::Relaxed);
    LIVE.fetch_sub(1, Ordering::Relaxed);
}

// SAFETY: every call is passed to `System` unchanged; the counters only read the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `alloc`'s contract, which `System` shares.
        let ptr = unsafe { System.alloc(layout) };
        counted(ptr, layout.size());
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        counted(ptr, layout.size());
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        uncounted(ptr, layout.size());
        // SAFETY: `ptr` came from `System` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = chunk(ptr);
        // SAFETY: `ptr` came from `System` with `layout`; the caller upholds the rest.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            REQUESTED.fetch_add(new_size as i64 - layout.size() as i64, Ordering::Relaxed);
            CHUNKS.fetch_add(chunk(new) - old, Ordering::Relaxed);
        }
        new
    }
}

/// The heap at one moment.
#[derive(Debug, Clone, Copy, Default)]
pub struct Heap {
    /// Bytes the program asked for and has not freed (live data).
    pub requested: i64,
    /// Bytes of the malloc chunks holding them (live data plus headers and rounding).
    pub chunks: i64,
    /// Allocations not freed.
    pub allocations: i64,
}

/// The live heap now.
pub fn heap() -> Heap {
    Heap {
        requested: REQUESTED.load(Ordering::Relaxed),
        chunks: CHUNKS.load(Ordering::Relaxed),
        allocations: LIVE.load(Ordering::Relaxed),
    }
}

/// Returns free memory at the top and inside every malloc arena to the kernel.
pub fn trim() {
    // SAFETY: malloc_trim takes no pointers and may be called at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
