import { render } from 'preact';
import { prefetch } from './api.js';
import { App } from './app.js';
import { FIRST_BANS_PAGE } from './pages/bans.js';

// Asked before the first render, together: the session, and the Bans page's first rows when that page is opened.
prefetch('/console/session');
if (location.hash.replace(/^#\/?/, '') === 'bans') prefetch(FIRST_BANS_PAGE);

render(<App />, document.getElementById('app')!);
