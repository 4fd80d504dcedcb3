// A Node app using the official openai SDK as its README shows, unmodified: the client reads
// OPENAI_BASE_URL and OPENAI_API_KEY from the environment, retries as the SDK does, and prints
// the streamed answer.
//
//   faultline run --exec 'node docs/examples/apps/node-app/app.mjs' --policy openai-node \
//     --filter 'tag:openai-chat'
import OpenAI from "openai";

const client = new OpenAI();
const stream = await client.chat.completions.create({
  model: "gpt-4o-mini",
  messages: [{ role: "user", content: "Say hello" }],
  stream: true,
});
let text = "";
for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
console.log(text);
