//! A fuzzer for everything that reads user input in kube-codegen: the whole
//! `generate` path (parse, markers, attributes, model, emit), the two derives
//! on every struct of the input, and the RBAC marker reader. Stable Rust, no extra tools:
//! inputs are the repository's own API trees, golden inputs and trybuild cases, mutated
//! with a seeded generator (byte-level edits, inserted marker and attribute fragments,
//! spliced lines). Nothing may panic.
//!
//! `cargo test -p codegen-tests --test fuzz` runs `FUZZ_CASES` cases (default 3000) from
//! `FUZZ_SEED` (default fixed); for a long run:
//! `FUZZ_CASES=1000000 FUZZ_SEED=$RANDOM cargo test --release -p codegen-tests --test fuzz`.
//! A crashing input is written to `tests/fuzz/crashes/`; once fixed it belongs in
//! `tests/fuzz/regressions/`, which every run replays first.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use kube_codegen_core::rbac;
use kube_codegen_core::source::SourceFile;

/// Fragments that reach the parsers' corners.
const DICTIONARY: &[&str] = &[
    "/// +genclient\n",
    "/// +genclient:nonNamespaced\n",
    "/// +genclient:onlyVerbs=get,list\n",
    "/// +genclient:skipVerbs=watch\n",
    "/// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s.io/api/autoscaling/v1.Scale\n",
    "/// +genclient:method=Foo,verb=update,input=k8s.io/api/core/v1.Pod\n",
    "/// +kubebuilder:validation:Minimum=1\n",
    "/// +kubebuilder:validation:items:Pattern=`^a$`\n",
    "/// +kube-codegen:validation:values:MaxLength=3\n",
    "/// +kube-codegen:validation:items:values:items:Enum=a;b\n",
    "/// +kube-codegen:validation:values:\n",
    "/// +kubebuilder:validation:XValidation:rule=\"self.a > 1\",message=\"m\"\n",
    "/// +kubebuilder:default={\"a\":1}\n",
    "/// +kubebuilder:printcolumn:name=A,type=integer,JSONPath=.spec.a\n",
    "/// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas\n",
    "/// +kubebuilder:resource:shortName=a;b,scope=Cluster\n",
    "/// +listType=map\n/// +listMapKey=name\n",
    "/// +kubebuilder:metadata:annotations=\"api-approved.kubernetes.io=x\"\n",
    "// +genclient\n",
    "//! +groupName=x.example.com\n",
    "#[kube(group = \"a.example.com\", version = \"v1\", kind = \"A\", namespaced)]\n",
    "#[kube(status = \"S\", scale(spec_replicas_path = \".spec.r\", status_replicas_path = \".status.r\"))]\n",
    "#[kube(printcolumn(name = \"n\", type_ = \"string\", json_path = \".spec.n\"))]\n",
    "#[genclient(only_verbs(get, list), method(foo, verb = get, subresource = \"x\"))]\n",
    "#[derive(CustomResource, GenClient, CrdMarkers)]\n",
    "#[serde(rename_all = \"camelCase\", tag = \"kind\")]\n",
    "pub struct S { pub a: Option<Vec<BTreeMap<String, S>>> }\n",
    "pub enum E { A, B(i32) }\n",
    "r#type",
    "r#",
    "::",
    "Vec<",
    "Option<",
    ">",
    "<",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "\"",
    "'",
    "\\",
    "=",
    ",",
    ";",
    ":",
    "+",
    "#",
    "é",
    "\u{200b}",
    "\n",
    "",
    "kind = \"r#type\"",
    "group = \"\"",
    "version = \"v0\"",
    "plural = \"A-B\"",
    "// +kubebuilder:rbac:groups=core,resources=pods,verbs=get\n",
    "// +kubebuilder:rbac:urls=/x,verbs=get,namespace=n\n",
];

/// A small xorshift generator: the same seed gives the same cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn seeds() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut dirs = vec![
        root.join("tests/golden"),
        root.join("tests/ui"),
        root.join("sample-controller/src/apis"),
    ];
    for e in std::fs::read_dir(root.join("examples")).unwrap().flatten() {
        dirs.push(e.path().join("src/apis"));
    }
    let mut out = Vec::new();
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs")
                && !p.components().any(|c| c.as_os_str() == "expected")
                && let Ok(text) = std::fs::read_to_string(&p)
            {
                out.push(text);
            }
        }
    }
    out.sort();
    assert!(out.len() > 50, "only {} seeds", out.len());
    out
}

fn mutate(rng: &mut Rng, seeds: &[String]) -> String {
    let mut chars: Vec<char> = seeds[rng.below(seeds.len())].chars().collect();
    for _ in 0..=rng.below(4) {
        let at = rng.below(chars.len() + 1);
        match rng.below(6) {
            0 if !chars.is_empty() => {
                let end = (at + rng.below(16)).min(chars.len());
                chars.drain(at.min(end)..end);
            }
            1 if at < chars.len() => {
                let word = DICTIONARY[rng.below(DICTIONARY.len())];
                let pick = word
                    .chars()
                    .nth(rng.below(word.chars().count().max(1)))
                    .unwrap_or('x');
                chars[at] = pick;
            }
            2 => {
                // A line of another seed.
                let other = &seeds[rng.below(seeds.len())];
                let lines: Vec<&str> = other.lines().collect();
                let line = lines.get(rng.below(lines.len())).copied().unwrap_or("");
                chars.splice(at..at, format!("{line}\n").chars());
            }
            3 => {
                // Repeat a bracket: deep nesting, near and past the limit.
                let b = ["Vec<", "(", "[", "{"][rng.below(4)];
                let n = [10, 120, 130, 300][rng.below(4)];
                chars.splice(at..at, b.repeat(n).chars());
            }
            _ => {
                let word = DICTIONARY[rng.below(DICTIONARY.len())];
                chars.splice(at..at, word.chars());
            }
        }
    }
    chars.into_iter().collect()
}

/// Feeds one input file to every reader. Panics are the failures.
fn exercise(text: &str) {
    let file = |rel: &str, text: &str| SourceFile {
        path: PathBuf::from(format!("apis/{rel}")),
        relative: PathBuf::from(rel),
        text: text.to_owned(),
    };
    let files = [
        file(
            "fuzz/v1/mod.rs",
            "//! +groupName=fuzz.example.com\npub mod input;\n",
        ),
        file("fuzz/v1/input.rs", text),
    ];
    let _ = kube_codegen_core::generate(&files, "crate::apis", "fuzz", None);
    let _ = kube_codegen_core::crd_runner(&files, "user::apis");
    let _ = rbac::collect(&[file("fuzz.rs", text)]);
    // The derives see items rustc has parsed; the fuzzer parses what is not too deep.
    if kube_codegen_core::tree::too_deep(text).is_none()
        && let Ok(ast) = syn::parse_file(text)
    {
        for item in ast.items {
            if let syn::Item::Struct(s) = item {
                let tokens = quote::ToTokens::to_token_stream(&s);
                let _ = kube_codegen_core::derive_gen_client(tokens.clone());
                let _ = kube_codegen_core::derive_crd_markers(tokens);
            }
        }
    }
}

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join(name)
}

#[test]
fn nothing_that_reads_user_input_panics() {
    let cases: usize = std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let seed: u64 = std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x9e37_79b9_7f4a_7c15);
    // Deep (allowed) nesting needs a larger stack than a test thread has.
    let crashes = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || run(cases, seed))
        .unwrap()
        .join()
        .unwrap();
    assert!(
        crashes.is_empty(),
        "{} crashing inputs, written to tests/fuzz/crashes/:\n{}",
        crashes.len(),
        crashes.join("\n")
    );
}

fn run(cases: usize, seed: u64) -> Vec<String> {
    let last_panic = Arc::new(Mutex::new(String::new()));
    let hook_panic = last_panic.clone();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        *hook_panic.lock().unwrap() = info.to_string();
    }));
    let mut crashes = Vec::new();
    let mut check = |text: &str, what: &str| {
        if catch_unwind(AssertUnwindSafe(|| exercise(text))).is_err() {
            let message = last_panic.lock().unwrap().clone();
            let name = format!(
                "{what}-{:016x}.rs",
                text.bytes()
                    .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b))
                        .wrapping_mul(0x100_0000_01b3))
            );
            let _ = std::fs::create_dir_all(dir("crashes"));
            let _ = std::fs::write(dir("crashes").join(&name), text);
            crashes.push(format!("{name}: {message}"));
        }
    };
    let mut regressions: Vec<PathBuf> = std::fs::read_dir(dir("regressions"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    regressions.sort();
    for path in &regressions {
        check(&std::fs::read_to_string(path).unwrap(), "regression");
    }
    let seeds = seeds();
    let mut rng = Rng(seed | 1);
    for _ in 0..cases {
        check(&mutate(&mut rng, &seeds), "case");
    }
    std::panic::set_hook(previous);
    eprintln!(
        "fuzz: {} regressions and {cases} cases from seed {seed}",
        regressions.len()
    );
    crashes
}
