//! The CPU a run was made on: the name of its file in `benches/results/`, and how the tables
//! name it. Ratios of times move between CPUs (a CPU that runs one implementation's code at a
//! higher rate than another's), so every result is kept under the CPU that measured it.

/// A CPU as `/proc/cpuinfo` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cpu {
    /// `AuthenticAMD`, `GenuineIntel`, ...; the architecture's name where there is none.
    pub vendor: String,
    /// The family number (AMD's extended family already added in, as Linux reports it).
    pub family: u32,
    /// The model number.
    pub model: u32,
    /// The model name the CPU gives, e.g. `AMD EPYC`.
    pub name: String,
}

impl Cpu {
    /// The CPU this process runs on (Linux; elsewhere only the architecture is known).
    pub fn detect() -> Self {
        std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|text| Self::from_cpuinfo(&text))
            .unwrap_or_else(|| Self {
                vendor: std::env::consts::ARCH.to_string(),
                family: 0,
                model: 0,
                name: std::env::consts::ARCH.to_string(),
            })
    }

    /// The first processor of a `/proc/cpuinfo` text; `None` if it lacks a field.
    pub fn from_cpuinfo(text: &str) -> Option<Self> {
        let field = |name: &str| {
            text.lines().find_map(|line| {
                let (key, value) = line.split_once(':')?;
                (key.trim() == name).then(|| value.trim().to_string())
            })
        };
        Some(Self {
            vendor: field("vendor_id")?,
            family: field("cpu family")?.parse().ok()?,
            model: field("model")?.parse().ok()?,
            name: field("model name")?,
        })
    }

    /// The micro-architecture, where the family and model tell it: AMD's Zen generations.
    pub fn microarchitecture(&self) -> Option<&'static str> {
        match (self.vendor.as_str(), self.family, self.model) {
            ("AuthenticAMD", 23, 0x00..=0x2f) => Some("Zen"),
            ("AuthenticAMD", 23, _) => Some("Zen 2"),
            ("AuthenticAMD", 25, 0x00..=0x0f | 0x20..=0x5f) => Some("Zen 3"),
            ("AuthenticAMD", 25, 0x10..=0x1f | 0x60..=0x7f | 0xa0..=0xaf) => Some("Zen 4"),
            ("AuthenticAMD", 26, _) => Some("Zen 5"),
            _ => None,
        }
    }

    /// The vendor in short: `amd`, `intel`, or the vendor string in lower case.
    fn vendor_short(&self) -> String {
        match self.vendor.as_str() {
            "AuthenticAMD" => "amd".to_string(),
            "GenuineIntel" => "intel".to_string(),
            other => other.to_lowercase(),
        }
    }

    /// The name of the CPU's files in `benches/results/`: vendor, micro-architecture where
    /// known, family and model, e.g. `amd-zen5-family26-model2`.
    pub fn slug(&self) -> String {
        let mut slug = self.vendor_short();
        if let Some(arch) = self.microarchitecture() {
            slug.push('-');
            slug.push_str(&arch.to_lowercase().replace(' ', ""));
        }
        slug.push_str(&format!("-family{}-model{}", self.family, self.model));
        slug.retain(|c| c.is_ascii_alphanumeric() || c == '-');
        slug
    }

    /// The short name the tables' columns use: the micro-architecture, or vendor, family and
    /// model.
    pub fn short(&self) -> String {
        match self.microarchitecture() {
            Some(arch) => arch.to_string(),
            None => format!("{} {}/{}", self.vendor_short(), self.family, self.model),
        }
    }

    /// The full description: `AMD EPYC (Zen 5; AuthenticAMD family 26, model 2)`.
    pub fn label(&self) -> String {
        let arch = self
            .microarchitecture()
            .map_or(String::new(), |arch| format!("{arch}; "));
        format!(
            "{} ({arch}{} family {}, model {})",
            self.name, self.vendor, self.family, self.model
        )
    }
}
