// Helpers shared by the demo's tools: reading what `snapshot` returns, and selectors by resource id.
import type { TrailblazeNodeSelector } from "@trailblaze/scripting";

/** One node of the snapshot's tree. */
export interface SnapNode {
  /** The node's ref, for `tap` and `type`. */
  ref: string;
  className: string;
  text?: string | null;
  hintText?: string | null;
  resourceId?: string | null;
  checked?: boolean | null;
  children: SnapNode[];
}

/** What the `snapshot` tool returns. */
export interface Snapshot {
  appId?: string | null;
  /** The compact text the LLM reads. */
  text: string;
  root: SnapNode;
}

/** Every node of the tree, depth first. */
export function allNodes(node: SnapNode): SnapNode[] {
  const out: SnapNode[] = [node];
  for (const child of node.children) out.push(...allNodes(child));
  return out;
}

/**
 * A selector for the demo app's node with id `id`: Android reads it `com.example.demo:id/<id>`, iOS
 * (an accessibility identifier) `<id>`.
 */
export function byId(id: string): TrailblazeNodeSelector {
  return { androidAccessibility: { resourceIdRegex: `(.*:id/)?${id}` } };
}

/** Whether a snapshot node has the demo app's id `id` (see `byId`). */
export function hasId(node: SnapNode, id: string): boolean {
  const rid = node.resourceId ?? "";
  return rid === id || rid.endsWith(`:id/${id}`);
}
