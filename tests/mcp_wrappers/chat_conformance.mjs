// Conformance checks of a Mattermost API v4 server with the official JavaScript client, run INSIDE a sandbox.
//
// Client4 from the npm package @mattermost/client (its node_modules sits next to this script) makes the
// calls that web, desktop and bot integrations make. Each check throws on a difference from Mattermost's
// behaviour; the script prints one JSON line per check: {"name", "ok", "detail"}. The checks make fresh
// users and a fresh channel through Client4 with the admin token; the loaded chat files give the team.
// Driven by test_chat_conformance.py against real Mattermost and against our service.
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { Client4, ClientError, WebSocketClient } = require('@mattermost/client');
console.log = console.error;  // the WebSocket client logs its connects; stdout carries only results

const SERVER = 'http://127.0.0.1:8065';
const ADMIN_TOKEN = readFileSync('/egym/secrets/chat-admin-token', 'utf8').trim();
const SUFFIX = randomBytes(3).toString('hex');
const PASSWORD = `Pw-${randomBytes(9).toString('base64url')}`;
const CHECKS = [];
const check = (name, fn) => CHECKS.push([name, fn]);

function assert(condition, detail) {
    if (!condition) {
        throw new Error(typeof detail === 'string' ? detail : JSON.stringify(detail).slice(0, 300));
    }
}

function client(token = '') {
    const c = new Client4();
    c.setUrl(SERVER);
    if (token) {
        c.setToken(token);
    }
    return c;
}

/** The ClientError a call must be refused with, checked for Mattermost's status and error id. */
async function refused(promise, status) {
    try {
        await promise;
    } catch (err) {
        assert(err instanceof ClientError, `not a ClientError: ${err}`);
        assert(err.status_code === status, `status ${err.status_code} (wanted ${status}): ${err.message}`);
        assert(err.server_error_id && err.message, {id: err.server_error_id, message: err.message});
        return err;
    }
    throw new Error(`accepted (wanted ${status})`);
}

const ids = (items) => items.map((item) => item.id);
const userPosts = (page) => page.order.map((id) => page.posts[id]).filter((p) => !p.type.startsWith('system_'));

// -- fixtures: three fresh users in the loaded team, logged in with their passwords; a public channel -----

const admin = client(ADMIN_TOKEN);
const TEAM = (await admin.getTeams())[0];
const USERS = [];
for (const n of [0, 1, 2]) {
    const username = `js${n}${SUFFIX}`;
    const user = await admin.createUser({
        username, email: `${username}@example.com`, password: PASSWORD, first_name: `Js${n}`, last_name: 'Tester',
    });
    await admin.addToTeam(TEAM.id, user.id);
    USERS.push(user);
}
const [U1, U2, U3] = USERS;
const [C1, C2, C3] = USERS.map(() => client());
await C1.login(U1.username, PASSWORD);
await C2.login(U2.username, PASSWORD);
await C3.login(U3.username, PASSWORD);
const CHANNEL = await C1.createChannel({team_id: TEAM.id, name: `js-${SUFFIX}`, display_name: 'JS conformance', type: 'O'});
await C1.addToChannel(U2.id, CHANNEL.id);

const post = (message, extra = {}, c = C1) => c.createPost({channel_id: CHANNEL.id, message, ...extra});

// -- login, sessions, config ----------------------------------------------------------------------------

check('login_with_password_sets_the_token', async () => {
    const c = client();
    const me = await c.login(U1.username, PASSWORD);
    assert(me.id === U1.id && c.getToken(), {me: me.id, token: c.getToken()});
    assert((await c.getMe()).username === U1.username, 'getMe after login');
});

check('set_token_with_the_admin_token_then_get_me', async () => {
    const me = await admin.getMe();
    assert(me.id && me.roles.includes('system_admin'), me);
});

check('wrong_password_is_refused_401', async () => {
    await refused(client().login(U1.username, 'wrong-password'), 401);
});

check('no_token_is_refused_401', async () => {
    await refused(client().getMe(), 401);
});

check('server_version_is_read_from_the_answers', async () => {
    const c = client(C1.getToken());
    await c.getMe();
    assert(c.getServerVersion(), 'no X-Version-Id seen by Client4');
});

check('client_config_old_format', async () => {
    const config = await C1.getClientConfig();
    assert(config && typeof config === 'object' && config.Version && 'SiteName' in config, Object.keys(config || {}));
});

check('ping', async () => {
    const status = await client().ping();
    assert(status.status === 'OK', status);
});

check('personal_access_token_as_the_client_token', async () => {
    const pat = await admin.createUserAccessToken(U3.id, 'js conformance');
    assert(pat.token && pat.user_id === U3.id, pat);
    assert((await client(pat.token).getMe()).id === U3.id, 'getMe with the token');
});

check('logout_ends_the_session', async () => {
    const c = client();
    await c.login(U3.username, PASSWORD);
    const token = c.getToken();
    const response = await c.logout();
    assert(response.ok && c.getToken() === '', {status: response.status});
    await refused(client(token).getMe(), 401);
});

// -- teams and channels ---------------------------------------------------------------------------------

check('teams_and_my_teams', async () => {
    // a user's GET /teams lists only teams open to anyone; the loaded team is invite-only
    assert(ids(await admin.getTeams()).includes(TEAM.id), 'getTeams');
    assert(ids(await C1.getMyTeams()).includes(TEAM.id), 'getMyTeams');
    assert((await C1.getTeamByName(TEAM.name)).id === TEAM.id, 'getTeamByName');
});

check('channels_of_a_team_and_mine', async () => {
    assert(ids(await C1.getChannels(TEAM.id, 0, 200)).includes(CHANNEL.id), 'getChannels');
    assert(ids(await C2.getMyChannels(TEAM.id)).includes(CHANNEL.id), 'getMyChannels');
    assert(!ids(await C3.getMyChannels(TEAM.id)).includes(CHANNEL.id), 'getMyChannels of a non-member');
});

check('channel_by_id_and_by_name', async () => {
    assert((await C1.getChannel(CHANNEL.id)).name === CHANNEL.name, 'getChannel');
    assert((await C1.getChannelByName(TEAM.id, CHANNEL.name)).id === CHANNEL.id, 'getChannelByName');
    assert((await C1.getChannelByNameAndTeamName(TEAM.name, CHANNEL.name)).id === CHANNEL.id, 'getChannelByNameAndTeamName');
});

check('private_channel_is_hidden_from_non_members', async () => {
    const hidden = await C1.createChannel({team_id: TEAM.id, name: `p-${SUFFIX}`, display_name: 'private', type: 'P'});
    await refused(C3.getChannel(hidden.id), 403);
    assert(!ids(await C3.getChannels(TEAM.id, 0, 200)).includes(hidden.id), 'listed to a non-member');
});

check('channel_members_and_my_member', async () => {
    const members = await C1.getChannelMembers(CHANNEL.id);
    assert([U1.id, U2.id].every((id) => members.some((m) => m.user_id === id)), members.map((m) => m.user_id));
    const mine = await C2.getMyChannelMember(CHANNEL.id);
    assert(mine.user_id === U2.id && mine.channel_id === CHANNEL.id, mine);
    assert((await C1.getChannelMember(CHANNEL.id, U2.id)).user_id === U2.id, 'getChannelMember');
    const profiles = await C1.getProfilesInChannel(CHANNEL.id);
    assert(ids(profiles).sort().join() === [U1.id, U2.id].sort().join(), ids(profiles));
});

check('channel_stats', async () => {
    const stats = await C1.getChannelStats(CHANNEL.id);
    assert(stats.channel_id === CHANNEL.id && stats.member_count === 2, stats);
});

check('my_team_and_channel_memberships', async () => {
    const teams = await C2.getMyTeamMembers();
    assert(teams.some((m) => m.team_id === TEAM.id && m.user_id === U2.id), teams);
    const channels = await C2.getMyChannelMembers(TEAM.id);
    assert(channels.some((m) => m.channel_id === CHANNEL.id && m.user_id === U2.id), channels);
});

check('join_a_public_channel', async () => {
    const open = await C1.createChannel({team_id: TEAM.id, name: `j-${SUFFIX}`, display_name: 'join me', type: 'O'});
    const member = await C3.addToChannel(U3.id, open.id);  // Client4's join: add yourself
    assert(member.user_id === U3.id && member.channel_id === open.id, member);
});

check('view_channel', async () => {
    await post('to be viewed', {}, C1);
    const viewed = await C2.viewMyChannel(CHANNEL.id);
    assert(viewed.status === 'OK', viewed);
    const mine = await C2.getMyChannelMember(CHANNEL.id);
    assert(mine.last_viewed_at > 0, mine);
});

check('direct_message_channel', async () => {
    const dm = await C1.createDirectChannel([U1.id, U3.id]);
    assert(dm.type === 'D' && dm.name === [U1.id, U3.id].sort().join('__'), dm);
    const message = await C1.createPost({channel_id: dm.id, message: 'hello in private'});
    const page = await C3.getPosts(dm.id);
    assert(page.order.includes(message.id), page.order);
    assert((await C1.createDirectChannel([U3.id, U1.id])).id === dm.id, 'the same DM twice');
});

check('group_message_channel', async () => {
    const gm = await C1.createGroupChannel([U1.id, U2.id, U3.id]);
    assert(gm.type === 'G', gm);
    const members = await C3.getChannelMembers(gm.id);
    assert(members.length === 3, members.map((m) => m.user_id));
});

// -- posts ----------------------------------------------------------------------------------------------

check('create_and_get_post', async () => {
    const created = await post('hello from Client4');
    assert(created.id && created.user_id === U1.id && created.channel_id === CHANNEL.id, created);
    const read = await C2.getPost(created.id);
    assert(read.message === 'hello from Client4' && read.create_at === created.create_at, read);
});

check('posts_page_since_before_after', async () => {
    const made = [];
    for (const n of [0, 1, 2, 3]) {
        made.push(await post(`page ${n} ${SUFFIX}`));
        await new Promise((resolve) => setTimeout(resolve, 5));  // distinct create_at for since
    }
    const page = userPosts(await C1.getPosts(CHANNEL.id, 0, 2));
    assert(ids(page).join() === [made[3].id, made[2].id].join(), ids(page));
    const since = await C1.getPostsSince(CHANNEL.id, made[1].create_at);
    assert(made.slice(2).every((p) => since.order.includes(p.id)) && !since.order.includes(made[0].id), since.order);
    const before = await C1.getPostsBefore(CHANNEL.id, made[2].id, 0, 2);
    assert(before.order.join() === [made[1].id, made[0].id].join(), before.order);
    const after = await C1.getPostsAfter(CHANNEL.id, made[1].id, 0, 2);
    assert([made[2].id, made[3].id].every((id) => after.order.includes(id)) && after.order.length === 2, after.order);
});

check('posts_around_the_last_unread', async () => {
    const c = client();
    await c.login(U2.username, PASSWORD);
    await c.viewMyChannel(CHANNEL.id);
    const unread = await post(`unread ${SUFFIX}`);
    const page = await c.getPostsUnread(CHANNEL.id, U2.id);
    assert(page.order.includes(unread.id) && 'next_post_id' in page && 'prev_post_id' in page, page.order);
});

check('posts_by_ids', async () => {
    const a = await post('by id a');
    const b = await post('by id b');
    const found = await C2.getPostsByIds([a.id, b.id]);
    assert(ids(found).sort().join() === [a.id, b.id].sort().join(), ids(found));
});

check('thread_holds_root_and_replies', async () => {
    const root = await post('thread root');
    const reply = await post('a reply', {root_id: root.id}, C2);
    const thread = await C1.getPostThread(root.id);
    assert([root.id, reply.id].every((id) => thread.order.includes(id)), thread.order);
    assert(thread.posts[reply.id].root_id === root.id, thread.posts[reply.id]);
});

check('user_threads', async () => {
    const root = await post('a followed thread');
    await post('reply in thread', {root_id: root.id}, C2);
    const threads = await C2.getUserThreads(U2.id, TEAM.id, {});
    assert(threads.threads.some((t) => t.id === root.id), threads.threads.map((t) => t.id));
    assert((await C2.getUserThread(U2.id, TEAM.id, root.id)).id === root.id, 'getUserThread');
});

check('patch_and_update_post', async () => {
    const original = await post('first words');
    const patched = await C1.patchPost({id: original.id, message: 'patched words'});
    assert(patched.message === 'patched words' && patched.edit_at > 0, patched);
    const updated = await C1.updatePost({...patched, message: 'updated words'});
    assert(updated.message === 'updated words', updated);
    assert((await C2.getPost(original.id)).message === 'updated words', 'read back');
});

check('patching_someone_elses_post_is_403', async () => {
    const mine = await post('not yours');
    await refused(C2.patchPost({id: mine.id, message: 'hijacked'}), 403);
});

check('delete_post', async () => {
    const doomed = await post('short lived');
    const answer = await C1.deletePost(doomed.id);
    assert(answer.status === 'OK', answer);
    await refused(C2.getPost(doomed.id), 404);
    assert(!(await C1.getPosts(CHANNEL.id)).order.includes(doomed.id), 'still listed');
});

check('pin_and_unpin_post', async () => {
    const pinned = await post('pin me');
    assert((await C2.pinPost(pinned.id)).status === 'OK', 'pinPost');
    assert((await C1.getPost(pinned.id)).is_pinned === true, 'is_pinned');
    const list = await C1.getPinnedPosts(CHANNEL.id);
    assert(list.order.includes(pinned.id), list.order);
    await C2.unpinPost(pinned.id);
    assert((await C1.getPost(pinned.id)).is_pinned === false, 'still pinned');
});

check('reactions_add_list_remove', async () => {
    const target = await post('react to me');
    const reaction = await C2.addReaction(U2.id, target.id, 'thumbsup');
    assert(reaction.user_id === U2.id && reaction.emoji_name === 'thumbsup', reaction);
    const listed = await C1.getReactionsForPost(target.id);
    assert(listed.some((r) => r.user_id === U2.id && r.emoji_name === 'thumbsup'), listed);
    await C2.removeReaction(U2.id, target.id, 'thumbsup');
    const after = (await C1.getReactionsForPost(target.id)) || [];
    assert(!after.some((r) => r.user_id === U2.id), after);
});

check('reacting_for_another_user_is_403', async () => {
    const target = await post('not your reaction');
    await refused(C2.addReaction(U1.id, target.id, 'smile'), 403);
});

check('search_posts_in_a_team_and_across_teams', async () => {
    const word = `needle${SUFFIX}`;
    const found = await post(`the ${word} is here`);
    const inTeam = await C1.searchPosts(TEAM.id, word, false);
    assert(inTeam.order.includes(found.id), inTeam.order);
    const everywhere = await C1.searchPostsWithParams('', {terms: word, is_or_search: false});
    assert(everywhere.order.includes(found.id), everywhere.order);
    const outsider = await C3.searchPosts(TEAM.id, word, false);
    assert(!outsider.order.includes(found.id), 'a non-member finds it');
});

// -- users ----------------------------------------------------------------------------------------------

check('profiles_by_ids_usernames_and_one', async () => {
    const byIds = await C1.getProfilesByIds([U2.id, U3.id]);
    assert(ids(byIds).sort().join() === [U2.id, U3.id].sort().join(), ids(byIds));
    const byNames = await C1.getProfilesByUsernames([U2.username]);
    assert(byNames.length === 1 && byNames[0].id === U2.id, byNames);
    assert((await C1.getUser(U3.id)).username === U3.username, 'getUser');
    assert((await C1.getUserByUsername(U3.username)).id === U3.id, 'getUserByUsername');
    assert(!('password' in byIds[0]), 'password field exposed');
});

check('autocomplete_users', async () => {
    const found = await C1.autocompleteUsers(`js1${SUFFIX}`, TEAM.id, '');
    assert(ids(found.users).includes(U2.id), found);
    const inChannel = await C1.autocompleteUsers(`js`, TEAM.id, CHANNEL.id);
    assert(ids(inChannel.users).includes(U2.id) && ids(inChannel.out_of_channel || []).includes(U3.id), inChannel);
});

check('search_users', async () => {
    const found = await C1.searchUsers(`js2${SUFFIX}`, {team_id: TEAM.id});
    assert(ids(found).includes(U3.id), ids(found));
});

check('user_status_get_update_and_by_ids', async () => {
    const set = await C2.updateStatus({user_id: U2.id, status: 'dnd'});
    assert(set.status === 'dnd', set);
    assert((await C1.getStatus(U2.id)).status === 'dnd', 'getStatus');
    const many = await C1.getStatusesByIds([U2.id, U1.id]);
    assert(many.find((s) => s.user_id === U2.id)?.status === 'dnd', many);
});

// -- files ----------------------------------------------------------------------------------------------

check('upload_file_then_post_and_read_infos', async () => {
    const form = new FormData();
    form.append('channel_id', CHANNEL.id);
    form.append('files', new Blob(['hello file'], {type: 'text/plain'}), 'note.txt');
    const uploaded = await C1.uploadFile(form);
    const info = uploaded.file_infos[0];
    assert(info.id && info.name === 'note.txt' && info.size === 10, uploaded);
    const withFile = await post('see attached', {file_ids: [info.id]});
    const infos = await C2.getFileInfosForPost(withFile.id);
    assert(infos.length === 1 && infos[0].id === info.id && infos[0].post_id === withFile.id, infos);
    const body = await fetch(C2.getFileUrl(info.id), {headers: {Authorization: `Bearer ${C2.getToken()}`}});
    assert(body.ok && (await body.text()) === 'hello file', {status: body.status});
});

// -- WebSocket event stream (Node's WebSocket: node --experimental-websocket on Node 20) --------------------

/** Resolves with the first message `match` accepts, or rejects after `ms`. */
function waitFor(ws, match, ms = 5000) {
    return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching event in ${ms} ms`)), ms);
        const listener = (message) => {
            if (match(message)) {
                clearTimeout(timer);
                ws.removeMessageListener(listener);
                resolve(message);
            }
        };
        ws.addMessageListener(listener);
    });
}

check('websocket_hello_ping_and_posted_event', async () => {
    assert(typeof WebSocket === 'function', 'this Node has no WebSocket (run it with --experimental-websocket)');
    const ws = new WebSocketClient();
    const hello = waitFor(ws, (m) => m.event === 'hello');
    ws.initialize(`${SERVER.replace('http', 'ws')}/api/v4/websocket`, C2.getToken());
    try {
        assert((await hello).broadcast.user_id === U2.id, 'hello for another user');
        await new Promise((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error('no answer to ping')), 5000);
            ws.ping(() => resolve(clearTimeout(timer)));
        });
        const posted = waitFor(ws, (m) => m.event === 'posted' && JSON.parse(m.data.post).message === `live ${SUFFIX}`);
        const sent = await post(`live ${SUFFIX}`);
        const event = await posted;
        assert(JSON.parse(event.data.post).id === sent.id && event.broadcast.channel_id === CHANNEL.id, event);
    } finally {
        ws.close();
    }
});

// -- errors ---------------------------------------------------------------------------------------------

check('unknown_post_is_404_and_malformed_id_400', async () => {
    await refused(C1.getPost('q'.repeat(26)), 404);
    await refused(C1.getPost('abc'), 400);
});

for (const [name, fn] of CHECKS) {
    let ok = true;
    let detail = '';
    try {
        await fn();
    } catch (err) {
        ok = false;
        detail = `${err?.constructor?.name}: ${err?.message}`.slice(0, 400);
    }
    console.log(JSON.stringify({name, ok, detail}));
}
