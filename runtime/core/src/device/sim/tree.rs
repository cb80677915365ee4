//! The view tree the simulated device shows: its current screen as [`ViewNode`]s, and hit testing.

use super::app_yaml;
use super::{SCREEN_HEIGHT, SCREEN_WIDTH, SimDevice};
use crate::device::{Bounds, ViewNode, ViewTree};

impl SimDevice {
    /// The tree as the screen shows it now; `snapshot` counts, this does not.
    pub(super) fn tree(&self) -> ViewTree {
        let mut root = ViewNode {
            class_name: "android.widget.FrameLayout".to_owned(),
            bounds: Bounds {
                left: 0,
                top: 0,
                right: SCREEN_WIDTH,
                bottom: SCREEN_HEIGHT,
            },
            enabled: true,
            ..ViewNode::default()
        };
        let screen = match self.app.screens.get(self.state.current) {
            Some(screen) if self.state.foreground => screen,
            _ => {
                return ViewTree {
                    app_id: None,
                    width: SCREEN_WIDTH,
                    height: SCREEN_HEIGHT,
                    root,
                };
            }
        };
        root.children = screen.roots.iter().filter_map(|&i| self.view(i)).collect();
        if let Some(message) = &self.state.message {
            root.children.push(ViewNode {
                class_name: "android.widget.TextView".to_owned(),
                text: Some(message.clone()),
                bounds: screen.banner,
                enabled: true,
                ..ViewNode::default()
            });
        }
        ViewTree {
            app_id: Some(self.app.id.clone()),
            width: SCREEN_WIDTH,
            height: SCREEN_HEIGHT,
            root,
        }
    }

    /// Node `i` as shown, or `None` when it is scrolled out of its container (uiautomator leaves out
    /// what is not on the screen).
    fn view(&self, i: usize) -> Option<ViewNode> {
        let s = self.state.current;
        let node = self.app.screens.get(s).and_then(|sc| sc.nodes.get(i))?;
        let bounds = self.shown_bounds(i)?;
        let text = match self.current_text(i) {
            Some(t) if node.editable && t.is_empty() => None,
            Some(t) if node.password => Some("•".repeat(t.chars().count())),
            other => other.map(str::to_owned),
        };
        Some(ViewNode {
            class_name: node.class.clone(),
            text,
            hint_text: node.hint.clone(),
            resource_id: node.id.as_ref().map(|id| format!("{}:id/{id}", self.app.id)),
            content_description: node.content_description.clone(),
            bounds,
            enabled: node.enabled,
            clickable: node.interactive(),
            editable: node.editable,
            focused: self.state.focus == Some(i),
            checked: node
                .checked
                .map(|c| self.state.checked.get(&(s, i)).copied().unwrap_or(c)),
            password: node.password,
            selected: false,
            scrollable: node.scroll.is_some_and(|max| max > 0),
            children: node.children.iter().filter_map(|&c| self.view(c)).collect(),
            web: None,
        })
    }

    /// Where node `i` of the current screen is on the screen: moved by its scroll container's
    /// offset and cut to the container, `None` when nothing of it is inside.
    pub(super) fn shown_bounds(&self, i: usize) -> Option<Bounds> {
        let s = self.state.current;
        let screen = self.app.screens.get(s)?;
        let node = screen.nodes.get(i)?;
        let Some(c) = node.scroller else {
            return Some(node.bounds);
        };
        let view = screen.nodes.get(c)?.bounds;
        let dy = self.state.offsets.get(&(s, c)).copied().unwrap_or(0);
        let b = node.bounds;
        let moved = Bounds {
            top: b.top - dy,
            bottom: b.bottom - dy,
            ..b
        };
        let cut = Bounds {
            left: moved.left.max(view.left),
            top: moved.top.max(view.top),
            right: moved.right.min(view.right),
            bottom: moved.bottom.min(view.bottom),
        };
        (cut.left < cut.right && cut.top < cut.bottom).then_some(cut)
    }
}

/// Collects the path of nodes (outermost first) under (x, y), each where `shown` puts it; later
/// siblings are on top.
pub(super) fn hit(
    nodes: &[app_yaml::Node],
    ids: &[usize],
    (x, y): (i32, i32),
    shown: &dyn Fn(usize) -> Option<Bounds>,
    path: &mut Vec<usize>,
) {
    for &i in ids.iter().rev() {
        let Some(node) = nodes.get(i) else { continue };
        if shown(i).is_some_and(|b| b.contains(x, y)) {
            path.push(i);
            hit(nodes, &node.children, (x, y), shown, path);
            return;
        }
    }
}
