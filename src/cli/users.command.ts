import type { User, UsersService } from '../users/users.service';
import { CLI_CONTEXT } from '../shared/audit-context';
import { readSecret } from './read-secret';

export const USERS_USAGE = `users add <username> [--role viewer|editor|admin|none]   password from stdin or a prompt
users list
users set-role <username> <viewer|editor|admin|none>   also ends the user's sessions
users set-password <username>                          password from stdin or a prompt; also ends the user's sessions
users disable <username>                               also ends the user's sessions
users enable <username>
users delete <username>
(The same rules as the users API and the console's Users page, which work while the service runs.)`;

function roleOption(args: string[]): string | null {
  const at = args.indexOf('--role');
  if (at === -1) return null;
  const role = args[at + 1];
  if (!role) throw new Error('--role needs a value');
  return role;
}

function required(value: string | undefined, what: string): string {
  if (!value || value.startsWith('--')) throw new Error(`missing ${what}\n\n${USERS_USAGE}`);
  return value;
}

const PAGE = 1000;

/** Every user, a page at a time. */
async function everyUser(users: UsersService): Promise<User[]> {
  const all: User[] = [];
  for (;;) {
    const page = await users.list({ limit: PAGE, after: all.at(-1)?.username });
    all.push(...page);
    if (page.length < PAGE) return all;
  }
}

const when = (date: Date | null) => (date === null ? 'never' : date.toISOString());

/** Runs one `users` subcommand; returns the text to print. Every rule is the service's, as for the API. */
export async function runUsersCommand(users: UsersService, [action, ...args]: string[]): Promise<string> {
  switch (action) {
    case 'add': {
      const username = required(args[0], '<username>');
      const user = await users.add(username, await readSecret(`Password for ${username}: `), roleOption(args), CLI_CONTEXT);
      return `Created user ${user.username} (role: ${user.role ?? 'none'})`;
    }
    case 'list': {
      const rows = await everyUser(users);
      if (rows.length === 0) return 'No users';
      return rows
        .map((u) => `${u.username}\t${u.role ?? 'none'}\t${u.disabled ? 'disabled' : 'active'}\tcreated ${when(u.created_at)}\tlast login ${when(u.last_login)}`)
        .join('\n');
    }
    case 'set-role': {
      const username = required(args[0], '<username>');
      const role = required(args[1], '<role>');
      await users.setRole(username, role, CLI_CONTEXT);
      return `Role of ${username} is now ${role}; their sessions ended`;
    }
    case 'set-password': {
      const username = required(args[0], '<username>');
      await users.setPassword(username, await readSecret(`New password for ${username}: `), CLI_CONTEXT);
      return `Password of ${username} changed; their sessions ended`;
    }
    case 'disable': {
      const username = required(args[0], '<username>');
      await users.disable(username, CLI_CONTEXT);
      return `Disabled ${username} and ended their sessions`;
    }
    case 'enable': {
      const username = required(args[0], '<username>');
      await users.enable(username, CLI_CONTEXT);
      return `Enabled ${username}`;
    }
    case 'delete': {
      const username = required(args[0], '<username>');
      await users.delete(username, CLI_CONTEXT);
      return `Deleted ${username}`;
    }
    default:
      throw new Error(`unknown users command "${action ?? ''}"\n\n${USERS_USAGE}`);
  }
}
