import { createRoot } from 'react-dom/client';
import { lazy, Suspense } from 'react';
import { useLocation } from './router.js';
import { LoginPage } from './pages/login-page.js';
import { DashboardPage } from './pages/dashboard-page.js';
import { NewProjectPage } from './pages/new-project-page.js';
import { ProjectPage } from './pages/project-page.js';
import { UploadPage } from './pages/upload-page.js';
import './styles.css';

// The editor is the heaviest page; the others load without it.
const AnnotatePage = lazy(() => import('./pages/annotate-page.js'));
// Team pages load on first use, so they add nothing to the editor's or the project page's download.
const ReviewPage = lazy(() => import('./pages/review-page.js'));
const QueuePage = lazy(() => import('./pages/queue-page.js'));
const AssignPage = lazy(() => import('./pages/assign-page.js'));
const InvitePage = lazy(() => import('./pages/invite-page.js').then((m) => ({ default: m.InvitePage })));
// Sample labelling (text, tabular, audio, video, LLM) brings wavesurfer.js and the virtual list only when opened.
const SamplesPage = lazy(() => import('./pages/samples-page.js'));
const ExperimentPage = lazy(() => import('./pages/experiment-page.js'));
// Team quality (issue 29) brings the charting library; the disagreement queue the overlay of every version.
const TeamQualityPage = lazy(() => import('./pages/team-quality-page.js'));
const DisagreementsPage = lazy(() => import('./pages/disagreements-page.js'));

const loading = <div className="page">Loading…</div>;

function App() {
  const { path } = useLocation();
  if (path === '/login') return <LoginPage />;
  if (path === '/' || path === '') return <DashboardPage />;
  if (path === '/projects/new') return <NewProjectPage />;
  if (path === '/queue')
    return (
      <Suspense fallback={loading}>
        <QueuePage />
      </Suspense>
    );
  const invite = /^\/invite\/([A-Za-z0-9_-]+)$/.exec(path);
  if (invite)
    return (
      <Suspense fallback={loading}>
        <InvitePage token={invite[1]} />
      </Suspense>
    );
  const experiment = /^\/projects\/(\d+)\/experiments\/(\d+)\/?$/.exec(path);
  if (experiment)
    return (
      <Suspense fallback={<div className="page">Loading experiment…</div>}>
        <ExperimentPage key={experiment[2]} projectId={Number(experiment[1])} experimentId={Number(experiment[2])} />
      </Suspense>
    );
  const quality = /^\/projects\/(\d+)\/quality(\/disagreements)?\/?$/.exec(path);
  if (quality) {
    const id = Number(quality[1]);
    return <Suspense fallback={loading}>{quality[2] ? <DisagreementsPage key={id} projectId={id} /> : <TeamQualityPage key={id} projectId={id} />}</Suspense>;
  }
  const match = /^\/projects\/(\d+)(?:\/(annotate|upload|review|assign|samples))?\/?$/.exec(path);
  if (match) {
    const id = Number(match[1]);
    if (match[2] === 'annotate')
      return (
        <Suspense fallback={<div className="page">Loading editor…</div>}>
          <AnnotatePage key={id} projectId={id} />
        </Suspense>
      );
    if (match[2] === 'assign')
      return (
        <Suspense fallback={loading}>
          <AssignPage key={id} projectId={id} />
        </Suspense>
      );
    if (match[2] === 'samples')
      return (
        <Suspense fallback={loading}>
          <SamplesPage key={id} projectId={id} />
        </Suspense>
      );
    if (match[2] === 'upload') return <UploadPage key={id} projectId={id} />;
    if (match[2] === 'review')
      return (
        <Suspense fallback={loading}>
          <ReviewPage key={id} projectId={id} />
        </Suspense>
      );
    return <ProjectPage key={id} projectId={id} />;
  }
  return <div className="page">Page not found.</div>;
}

createRoot(document.getElementById('root')!).render(<App />);
