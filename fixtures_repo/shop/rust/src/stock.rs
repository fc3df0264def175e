pub struct Stock {
    counts: Vec<u32>,
}

impl Stock {
    pub fn take(&mut self, slot: usize) -> u32 {
        let n = self.counts[slot];
        self.counts[slot] = n.checked_sub(1).expect("stock underflow");
        n
    }
}
