//! Module names for QuickJS: `@trailblaze/scripting` is the SDK (a build of `sdk-ts/src/index.ts`),
//! everything else a `.ts` file under the trailmaps folder, transpiled by swc on the way in.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use rquickjs::loader::{ImportAttributes, Loader, Resolver};
use rquickjs::module::Declared;
use rquickjs::{Ctx, Module};

use super::{BOOTSTRAP_MODULE, CONSOLE_CODE, CONSOLE_MODULE, CONSOLE_SOURCE, SDK_CODE, SDK_MODULE, bytecode};
use crate::script::transpile::{Transpiled, Transpiler};
use crate::script::{errors, sdk};

/// Resolves `@trailblaze/scripting` and relative imports (`./shared`, `../x.ts`) to module names relative
/// to the trailmaps folder; nothing may resolve outside it.
pub(super) struct ScriptResolver;

impl Resolver for ScriptResolver {
    fn resolve<'js>(
        &mut self,
        _ctx: &Ctx<'js>,
        base: &str,
        name: &str,
        _attrs: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<String> {
        if name == SDK_MODULE || (name == CONSOLE_MODULE && base == BOOTSTRAP_MODULE) {
            return Ok(name.to_string());
        }
        let joined = if name.starts_with("./") || name.starts_with("../") {
            Path::new(base).parent().unwrap_or(Path::new("")).join(name)
        } else if !name.starts_with('/') && (name.ends_with(".ts") || name.ends_with(".js")) && !name.contains(':') {
            if name.ends_with(".js") {
                // A `.js` tool the host imports by its own name (described by a `.yaml`).
                return Ok(name.to_string());
            }
            // A module name the host itself imports (`demo/tools/signIn.ts`).
            PathBuf::from(name)
        } else {
            return Err(rquickjs::Error::new_resolving_message(
                base,
                name,
                "only `@trailblaze/scripting` and relative `.ts` files can be imported",
            ));
        };
        let mut parts: Vec<String> = Vec::new();
        for c in joined.components() {
            match c {
                Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
                Component::ParentDir => {
                    if parts.pop().is_none() {
                        return Err(rquickjs::Error::new_resolving_message(
                            base,
                            name,
                            "the import leaves the trailmaps folder",
                        ));
                    }
                }
                Component::CurDir => {}
                _ => {
                    return Err(rquickjs::Error::new_resolving_message(
                        base,
                        name,
                        "absolute imports are not allowed",
                    ));
                }
            }
        }
        let mut module = parts.join("/");
        // `./x.js` is how NodeNext-style TypeScript names a sibling `x.ts`.
        if let Some(stem) = module.strip_suffix(".js") {
            module = format!("{stem}.ts");
        } else if !module.ends_with(".ts") {
            module.push_str(".ts");
        }
        Ok(module)
    }
}

pub(super) struct ScriptLoader {
    pub(super) root: PathBuf,
    pub(super) transpiler: Arc<Transpiler>,
    pub(super) modules: Rc<RefCell<HashMap<String, Arc<Transpiled>>>>,
    pub(super) load_error: Rc<RefCell<Option<String>>>,
    /// Every module this engine loaded, kept until the engine ends (see [`bytecode::declare`]).
    pub(super) kept: Rc<RefCell<Vec<Arc<Transpiled>>>>,
}

impl Loader for ScriptLoader {
    fn load<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
        _attrs: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<Module<'js, Declared>> {
        if name == SDK_MODULE {
            let code = sdk::javascript().map_err(|e| rquickjs::Error::new_loading_message(name, e.clone()))?;
            return bytecode::declare(ctx, name, code, &SDK_CODE);
        }
        if name == CONSOLE_MODULE {
            return bytecode::declare(ctx, name, CONSOLE_SOURCE, &CONSOLE_CODE);
        }
        let fail = |msg: String| {
            *self.load_error.borrow_mut() = Some(msg.clone());
            rquickjs::Error::new_loading_message(name, msg)
        };
        let source = crate::files::read_text(&self.root.join(name))
            .map_err(|e| fail(format!("cannot read {}: {e}", errors::shown_path(&self.root, name))))?;
        let t = self
            .transpiler
            .transpile(name, &source)
            .map_err(|e| fail(errors::shown_in(&self.root, name, e.to_string())))?;
        self.modules.borrow_mut().insert(name.to_string(), t.clone());
        // The engine keeps every module it loaded to its end: the loaded bytecode points into it.
        self.kept.borrow_mut().push(t.clone());
        bytecode::declare(ctx, name, t.code.as_str(), &t.bytecode.0)
    }
}
