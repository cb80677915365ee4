// TEMPORARY stand-in until analyze.rs lands.
#[derive(Debug, Clone, PartialEq)]
pub struct AnalyzedTool {
    pub name: String,
    pub description: Option<String>,
    pub surface_to_llm: Option<bool>,
    pub is_recordable: Option<bool>,
    pub read_only: Option<bool>,
    pub input_schema: Option<serde_json::Value>,
    pub output_schema: Option<serde_json::Value>,
    pub line: u32,
}
#[derive(Debug, Clone, thiserror::Error)]
#[error("{file}:{line}:{col}: {message}")]
pub struct AnalyzeError {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub message: String,
}
pub fn analyze_module(
    file: &str,
    source: &str,
    _load: &dyn Fn(&str, &str) -> Option<(String, String)>,
) -> Result<Vec<AnalyzedTool>, AnalyzeError> {
    let _ = file;
    let mut out = Vec::new();
    for (i, line) in source.lines().enumerate() {
        if let Some(rest) = line.strip_prefix("export const ") {
            if line.contains("trailblaze.tool") {
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                out.push(AnalyzedTool {
                    name,
                    description: None,
                    surface_to_llm: None,
                    is_recordable: None,
                    read_only: if line.contains("readOnly: true") {
                        Some(true)
                    } else {
                        None
                    },
                    input_schema: None,
                    output_schema: None,
                    line: i as u32 + 1,
                });
            }
        }
    }
    Ok(out)
}
