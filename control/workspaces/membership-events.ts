/**
 * What a membership change says on MEMBERSHIP_CHANGED_CHANNEL, and whom it concerns: every process forgets the
 * callers it cached for that member of that workspace (keys, access tokens), and only those, so one team's changes
 * do not empty everyone's caches.
 */

/** `accountId` "*": every member (the workspace was deleted). */
export const membershipMessage = (workspaceId: string, accountId: string): string => `${workspaceId} ${accountId}`;

/** Whether a cached caller may be stale after `message`; a message not in this form concerns everyone. */
export function concerns(message: string, caller: { workspaceId: string; accountId: string }): boolean {
  const [workspaceId, accountId, extra] = message.split(" ");
  if (!workspaceId || !accountId || extra !== undefined) return true;
  return workspaceId === caller.workspaceId && (accountId === "*" || accountId === caller.accountId);
}
