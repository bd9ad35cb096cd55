import { useEffect, useRef, useState, type FormEvent } from 'react';
import { api } from '../api.js';
import type { Member, ProjectRole, RequestOf, ResponseOf, Role } from '../types.js';

/** The roles a member can be given (a project has one owner, its creator). */
type GrantedRole = RequestOf<'/api/projects/{id}/members', 'post'>['role'];
import { ErrorBanner, useUser } from './layout.js';
import { useProjectAccess } from './project-access.js';

type Invitation = ResponseOf<'/api/projects/{id}/invitations', 'get'>[number];

/** Who works on the project and in which role: add by email, change a role, remove (or leave). */
export function MembersPanel({ projectId }: { projectId: number }) {
  const me = useUser();
  const [members, setMembers] = useState<Member[] | null>(null);
  const [roles, setRoles] = useState<Role[]>([]);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<GrantedRole>('annotator');
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const { can, why } = useProjectAccess(projectId);
  const manage = why('project.members');
  const [invitations, setInvitations] = useState<Invitation[]>([]);
  const [link, setLink] = useState<ResponseOf<'/api/projects/{id}/invitations', 'post'> | null>(null);

  const load = () => api.get('/api/projects/{id}/members', { path: { id: projectId } }).then(setMembers, (e) => setError((e as Error).message));
  const loadInvitations = () => api.get('/api/projects/{id}/invitations', { path: { id: projectId } }).then(setInvitations, () => undefined);
  useEffect(() => {
    if (can('project.members')) void loadInvitations();
  }, [projectId, can('project.members')]);
  useEffect(() => {
    void load();
    api.get('/api/identity/roles').then(setRoles, (e) => setError((e as Error).message));
  }, [projectId]);

  // The owner is the project's creator; the other roles can be given.
  const assignable = roles.filter((r) => r.name !== 'owner');
  const describe = (name: string) => roles.find((r) => r.name === name)?.description ?? '';

  const act = async (fn: () => Promise<unknown>, done?: string) => {
    setError(null);
    setNotice(null);
    try {
      await fn();
      if (done) setNotice(done);
      await load();
    } catch (e) {
      setError((e as Error).message);
    }
  };

  const add = (e: FormEvent) => {
    e.preventDefault();
    const who = email.trim();
    void act(async () => {
      await api.post('/api/projects/{id}/members', { path: { id: projectId }, body: { email: who, role } });
      setEmail('');
    }, `${who} added as ${role}`);
  };

  /** Someone without an account: an invitation link to share (no e-mail is sent). */
  const invite = () => {
    const who = email.trim();
    void act(async () => {
      const out = await api.post('/api/projects/{id}/invitations', { path: { id: projectId }, body: { email: who, role } });
      setLink(out);
      setEmail('');
      await loadInvitations();
    }, `Invitation for ${who} created: share the link below`);
  };

  /**
   * A new link for a pending invitation whose link the server cannot show again (no SECRETS_KEY, or made before links
   * were kept): the old one is revoked and a new one made for the same person and role.
   */
  const newLink = (inv: Invitation) =>
    void act(async () => {
      await api.delete('/api/invitations/{id}', { path: { id: inv.id } });
      setLink(await api.post('/api/projects/{id}/invitations', { path: { id: projectId }, body: { email: inv.email, role: inv.role } }));
      await loadInvitations();
    }, `New link for ${inv.email}: the old one no longer works`);

  const revoke = (inv: Invitation) =>
    void act(async () => {
      await api.delete('/api/invitations/{id}', { path: { id: inv.id } });
      if (link?.id === inv.id) setLink(null);
      await loadInvitations();
    }, `Invitation for ${inv.email} revoked: its link no longer works`);

  const [copied, setCopied] = useState<string | null>(null);
  /** Copies a link (the clipboard API, or the selected field where it is missing). */
  const copyLink = async (url: string, field: HTMLInputElement | null) => {
    try {
      await navigator.clipboard.writeText(url);
    } catch {
      field?.select();
      document.execCommand('copy');
    }
    setCopied(url);
  };
  const linkField = useRef<HTMLInputElement>(null);
  useEffect(() => setCopied(null), [link]);

  const remove = (m: Member) => {
    const leaving = me?.id === m.user_id;
    if (!confirm(leaving ? 'Leave this project?' : `Remove ${m.display_name || m.email} from the project?`)) return;
    void act(async () => {
      await api.delete('/api/projects/{id}/members/{user_id}', { path: { id: projectId, user_id: m.user_id } });
      if (leaving) location.assign('/');
    }, `${m.email} removed`);
  };

  return (
    <section className="card members" aria-label="Members">
      <h3>Members</h3>
      <ErrorBanner message={error} onClose={() => setError(null)} />
      {notice && <p className="muted small" role="status">{notice}</p>}
      {members === null ? (
        <p className="muted">Loading members…</p>
      ) : (
        <table className="list">
          <thead>
            <tr>
              <th>Name</th>
              <th>Email</th>
              <th>Role</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {members.map((m) => (
              <tr key={m.user_id} data-member={m.email}>
                <td>
                  {m.display_name || '—'}
                  {me?.id === m.user_id && <span className="muted small"> (you)</span>}
                </td>
                <td>{m.email}</td>
                <td>
                  {m.role === 'owner' ? (
                    <span title={describe('owner')}>owner</span>
                  ) : (
                    <select
                      value={m.role}
                      aria-label={`Role of ${m.email}`}
                      title={manage ?? describe(m.role)}
                      disabled={!!manage}
                      onChange={(e) => void act(() => api.patch('/api/projects/{id}/members/{user_id}', { path: { id: projectId, user_id: m.user_id }, body: { role: e.target.value as GrantedRole } }), `${m.email} is now ${e.target.value}`)}
                    >
                      {assignable.map((r) => (
                        <option key={r.name} value={r.name}>
                          {r.name}
                        </option>
                      ))}
                    </select>
                  )}
                </td>
                <td>
                  {m.role !== 'owner' && (me?.id === m.user_id || !manage) && (
                    <button className="ghost small" onClick={() => remove(m)} aria-label={`Remove ${m.email}`}>
                      {me?.id === m.user_id ? 'Leave' : 'Remove'}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {manage ? (
        <p className="muted small" data-testid="members-denied">{manage}</p>
      ) : (
        <form className="inline-form" onSubmit={add} aria-label="Add member">
          <label>
            Email
            <input type="email" required placeholder="colleague@example.com" value={email} onChange={(e) => setEmail(e.target.value)} name="member-email" />
          </label>
          <label>
            Role
            <select value={role} onChange={(e) => setRole(e.target.value as GrantedRole)} name="member-role">
              {assignable.map((r) => (
                <option key={r.name} value={r.name}>
                  {r.name}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" className="primary">
            Add member
          </button>
          <button type="button" onClick={invite} disabled={!email.trim()} title="For someone without an account: creates a link to share">
            Invite by link
          </button>
        </form>
      )}
      {link?.url && (
        <p className="invite-link" data-testid="invite-link">
          Share this link with {link.email} (works once, until {new Date(link.expires_at).toLocaleString()}):{' '}
          <input ref={linkField} readOnly className="whole-name" value={`${location.origin}${link.url}`} onFocus={(e) => e.currentTarget.select()} aria-label="Invitation link" size={60} />{' '}
          <button type="button" className="small" onClick={() => void copyLink(`${location.origin}${link.url}`, linkField.current)}>
            {copied === `${location.origin}${link.url}` ? 'Copied' : 'Copy link'}
          </button>
        </p>
      )}
      {!manage && invitations.length > 0 && (
        <table className="list" aria-label="Invitations">
          <thead>
            <tr>
              <th>Invited</th>
              <th>Role</th>
              <th>Status</th>
              <th>Link</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {invitations.map((inv) => (
              <InvitationRowView key={inv.id} inv={inv} copied={copied} onCopy={copyLink} onNewLink={newLink} onRevoke={revoke} />
            ))}
          </tbody>
        </table>
      )}
      {assignable.length > 0 && (
        <dl className="role-catalog small">
          {assignable.map((r) => (
            <div key={r.name}>
              <dt>{r.name}</dt>
              <dd className="muted">{r.description}</dd>
            </div>
          ))}
        </dl>
      )}
    </section>
  );
}

/** One invitation: a pending one's link with its copy button, and Revoke (or a new link where the old cannot be shown). */
function InvitationRowView({ inv, copied, onCopy, onNewLink, onRevoke }: {
  inv: Invitation;
  copied: string | null;
  onCopy: (url: string, field: HTMLInputElement | null) => Promise<void>;
  onNewLink: (inv: Invitation) => void;
  onRevoke: (inv: Invitation) => void;
}) {
  const field = useRef<HTMLInputElement>(null);
  const url = inv.url ? `${location.origin}${inv.url}` : null;
  const pending = inv.status === 'pending';
  return (
    <tr data-invitation={inv.email}>
      <td>{inv.email}</td>
      <td>{inv.role}</td>
      <td>
        {inv.status}
        {pending && <span className="muted small"> until {new Date(inv.expires_at).toLocaleDateString()}</span>}
      </td>
      <td>
        {url ? (
          <>
            <input ref={field} readOnly className="whole-name" value={url} onFocus={(e) => e.currentTarget.select()} aria-label={`Invitation link for ${inv.email}`} size={36} />{' '}
            <button type="button" className="small" onClick={() => void onCopy(url, field.current)} aria-label={`Copy the link for ${inv.email}`}>
              {copied === url ? 'Copied' : 'Copy'}
            </button>
          </>
        ) : pending ? (
          <button className="ghost small" onClick={() => onNewLink(inv)} title="This link cannot be shown again (the server keeps links only with a SECRETS_KEY): this replaces it with a new one to copy">
            New link
          </button>
        ) : (
          <span className="muted">—</span>
        )}
      </td>
      <td>
        {pending && (
          <button className="ghost small" onClick={() => onRevoke(inv)} aria-label={`Revoke the invitation for ${inv.email}`}>
            Revoke
          </button>
        )}
      </td>
    </tr>
  );
}
