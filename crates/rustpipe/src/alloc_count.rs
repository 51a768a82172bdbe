//! A global allocator that counts allocations and bytes: the authority for
//! the stage's claim that steady state allocates nothing per record. Only
//! the tests, benches and the CPU rig install it (`#[global_allocator]`);
//! the pipeline itself runs on the system allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

pub struct CountingAllocator {
    allocations: AtomicU64,
    bytes: AtomicU64,
    /// Off while a benchmark times its work, so counting never slows what
    /// is timed; on from the start.
    counting: AtomicBool,
}

/// Allocations and bytes counted up to a moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub allocations: u64,
    pub bytes: u64,
}

impl std::ops::Sub for Counts {
    type Output = Counts;

    fn sub(self, earlier: Counts) -> Counts {
        Counts {
            allocations: self.allocations - earlier.allocations,
            bytes: self.bytes - earlier.bytes,
        }
    }
}

impl CountingAllocator {
    pub const fn new() -> CountingAllocator {
        CountingAllocator {
            allocations: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            counting: AtomicBool::new(true),
        }
    }

    pub fn counts(&self) -> Counts {
        Counts {
            allocations: self.allocations.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
        }
    }

    /// Turns counting on or off (it is on from the start).
    pub fn set_counting(&self, on: bool) {
        self.counting.store(on, Ordering::Relaxed);
    }

    fn count(&self, size: usize) {
        if !self.counting.load(Ordering::Relaxed) {
            return;
        }
        self.allocations.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(size as u64, Ordering::Relaxed);
    }
}

impl Default for CountingAllocator {
    fn default() -> Self {
        CountingAllocator::new()
    }
}

// SAFETY: every call goes to the system allocator unchanged; the counters
// are atomics that never allocate.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.count(layout.size());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.count(layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        self.count(new_size);
        System.realloc(ptr, layout, new_size)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}
