/**
 * Tag and folder suggestions: the account's own values, offered as <datalist>s by the list's filters and the
 * link form. They come from the account's newest links only, so a page view costs the same for 100 links or
 * 1,000,000; a value used only on older links can still be typed (the filters ignore case).
 */
import type { TagsAndFolders } from "../../shared/ports.ts";
import { esc } from "./layout.ts";
import type { SignedInCtx } from "./session.ts";

/** How many of the account's newest links the suggestions are read from. */
export const SUGGESTION_LINKS = 500;

export const TAG_LIST_ID = "tag-suggestions";
export const FOLDER_LIST_ID = "folder-suggestions";

export function accountSuggestions(ctx: SignedInCtx): Promise<TagsAndFolders> {
  return ctx.deps.store.listTagsAndFolders(ctx.account.id, SUGGESTION_LINKS);
}

/** Both datalists; the inputs name them with list="…". */
export function suggestionLists(s: TagsAndFolders): string {
  const options = (values: string[]) => values.map((v) => `<option value="${esc(v)}"></option>`).join("");
  return `<datalist id="${TAG_LIST_ID}">${options(s.tags)}</datalist><datalist id="${FOLDER_LIST_ID}">${options(s.folders)}</datalist>`;
}
