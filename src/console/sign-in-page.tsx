import { Page, Problem } from './layout.tsx';

/** The token form. A POST, so that the token never lands in a URL, a history or a log. */
export function SignInPage(props: { problem?: string }) {
  return (
    <Page title="Sign in">
      <form class="sign-in" method="post" action="/ui/sign-in">
        <label for="token">Token</label>
        <input id="token" name="token" type="password" autocomplete="off" required />
        <button type="submit">Sign in</button>
      </form>
      {props.problem ? <Problem sentence={props.problem} /> : null}
      <p class="hint">
        A token from <code>llmgw ctl token create</code>, or the admin token <code>LLMGW_ADMIN_TOKEN</code>.
        The console keeps it in a cookie no script can read, and shows what its role and scope may read.
      </p>
    </Page>
  );
}
